package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// timeline is one workflow's history as a list of lines: each event's time since the start, its
// type and, for workflow tasks, the queue (normal or sticky), the timeout that fired, the
// failure's cause and the worker that took it. It is how a stalled payment is explained: which
// task waited, on which queue, and what the server did about it.
type timeline struct {
	events   int
	timedOut int // WorkflowTaskTimedOut events
	failed   int // WorkflowTaskFailed events
	closed   bool
	lines    []string
}

func (tl *timeline) String() string { return strings.Join(tl.lines, "\n") }

// readTimeline reads wf's history (the current run) as it is now.
func readTimeline(ctx context.Context, tc client.Client, wf string) (*timeline, error) {
	it := tc.GetWorkflowHistory(ctx, wf, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	tl := &timeline{}
	var start time.Time
	scheduled := map[int64]time.Time{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", wf, err)
		}
		tl.events++
		at := ev.GetEventTime().AsTime()
		if start.IsZero() {
			start = at
		}
		line := fmt.Sprintf("%8.3fs %3d %s", at.Sub(start).Seconds(), ev.GetEventId(), strings.TrimPrefix(ev.GetEventType().String(), "EVENT_TYPE_"))
		line += describeEvent(ev)
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			scheduled[ev.GetEventId()] = at
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			if s, ok := scheduled[ev.GetWorkflowTaskStartedEventAttributes().GetScheduledEventId()]; ok {
				line += fmt.Sprintf(" (waited %.3fs)", at.Sub(s).Seconds())
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
			tl.timedOut++
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			tl.failed++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
			tl.closed = true
		}
		tl.lines = append(tl.lines, line)
	}
	return tl, nil
}

// describeEvent is what matters of a workflow task event for a stall.
func describeEvent(ev *historypb.HistoryEvent) string {
	switch ev.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
		a := ev.GetWorkflowTaskScheduledEventAttributes()
		kind := "normal"
		if a.GetTaskQueue().GetKind() == enumspb.TASK_QUEUE_KIND_STICKY {
			kind = "sticky"
		}
		return fmt.Sprintf(" queue=%s (%s) start-to-close=%s attempt=%d", a.GetTaskQueue().GetName(), kind,
			a.GetStartToCloseTimeout().AsDuration(), a.GetAttempt())
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
		a := ev.GetWorkflowTaskStartedEventAttributes()
		return fmt.Sprintf(" scheduled=%d by %s", a.GetScheduledEventId(), a.GetIdentity())
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
		a := ev.GetWorkflowTaskTimedOutEventAttributes()
		return fmt.Sprintf(" %s scheduled=%d started=%d", strings.TrimPrefix(a.GetTimeoutType().String(), "TIMEOUT_TYPE_"),
			a.GetScheduledEventId(), a.GetStartedEventId())
	case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
		a := ev.GetWorkflowTaskFailedEventAttributes()
		return fmt.Sprintf(" cause=%s", strings.TrimPrefix(a.GetCause().String(), "WORKFLOW_TASK_FAILED_CAUSE_"))
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
		return " " + ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName()
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
		a := ev.GetWorkflowExecutionStartedEventAttributes()
		return fmt.Sprintf(" queue=%s task-timeout=%s", a.GetTaskQueue().GetName(), a.GetWorkflowTaskTimeout().AsDuration())
	}
	return ""
}
