// Package workflows holds the service's Temporal workflows: deterministic scripts that decide,
// while activities (package activities) do the I/O. Names of task queues, workflow ids,
// schedules, signals, updates and queries are the exported constants and helpers of this file.
//
// It also holds what the worker runs beside them: the outbox sweeper (start.go) and the webhook
// sender (webhook_sender.go). A webhook delivery is the one piece of work whose first attempt is
// made without a workflow: the sender makes it straight from the outbox within milliseconds of
// the event's commit, and starts WebhookDelivery only to retry what that attempt did not settle.
// Through Temporal, every delivery waited for a workflow start and three tasks on the server
// that also runs the payments (seconds under load, deliveries falling behind events); the
// measurements and the guarantees kept are in docs/webhook-delivery.md.
package workflows

import (
	"time"

	"github.com/google/uuid"
)

// TaskQueue is the one task queue the worker polls and workflows are started on. It is set
// once at startup (SIKA_TASK_QUEUE, default "sika"); each test package sets its own so that
// packages sharing one Temporal server never run each other's workflows.
var TaskQueue = "sika"

// WebhookTaskQueue is the task queue of the webhook retries (WebhookDelivery and its
// activities), polled by a worker of its own beside the outbox sweeper (SweepOutbox). Apart from
// TaskQueue, a storm of failing merchant endpoints (hundreds of retry workflows with their timers)
// queues behind its own pollers and never delays a payment's or a payout's workflow tasks.
func WebhookTaskQueue() string { return TaskQueue + "-webhooks" }

// IdempotencyPurgeScheduleID is the Temporal schedule that purges expired Idempotency-Keys.
const IdempotencyPurgeScheduleID = "housekeeping:idempotency-keys"

// RecheckScheduleID is the Temporal schedule that re-reads the attempts that ended without the
// operator's final word; it runs every RecheckInterval (SIKA_RECHECK_INTERVAL, default 1 minute).
const RecheckScheduleID = "money-safety:recheck-ended-attempts"

// RecheckInterval is how often the re-check sweep runs, set once at startup.
var RecheckInterval = time.Minute

// PaymentWorkflowID is the id of a collection's workflow: one per transaction; a retry starts a
// new run under the same id.
func PaymentWorkflowID(txID uuid.UUID) string { return "payment:" + txID.String() }

// Payment workflow message names.
const (
	// SignalGatewayCallback carries a gateway's callback (GatewayCallback) to the payment.
	SignalGatewayCallback = "gateway-callback"
	// UpdateConfirmOTP carries a post-push OTP (string) and answers the resulting outcome.
	UpdateConfirmOTP = "confirm-otp"
	// UpdateGatewayStatus carries a status read by /verify/ (activities.CollectionOutcome) and
	// answers once the payment has taken it into account.
	UpdateGatewayStatus = "gateway-status"
	// UpdateAwaitInitiation answers the customer's next action once the first gateway accepted
	// the collection (redirect networks need its URL in the softpay response).
	UpdateAwaitInitiation = "await-initiation"
	// UpdateSupportResolution carries support's decision (SupportResolution) on a run the
	// operator leaves unclear, and answers once it is recorded.
	UpdateSupportResolution = "support-resolution"
	// SignalPayoutApprovalDecided tells a payout that waits for approval that it was approved
	// or rejected: it reads the payout again.
	SignalPayoutApprovalDecided = "payout-approval-decided"
)
