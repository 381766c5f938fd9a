// Package workflows holds the service's Temporal workflows: deterministic scripts that decide,
// while activities (package activities) do the I/O. Names of task queues, workflow ids,
// schedules, signals, updates and queries are the exported constants and helpers of this file.
package workflows

// TaskQueue is the one task queue the worker polls.
const TaskQueue = "sika"

// IdempotencyPurgeScheduleID is the Temporal schedule that purges expired Idempotency-Keys.
const IdempotencyPurgeScheduleID = "housekeeping:idempotency-keys"
