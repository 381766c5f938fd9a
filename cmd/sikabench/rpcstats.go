package main

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

// rpcStats records the in-process service's calls to Temporal (a gRPC interceptor on its
// client): per method, and for workflow task polls per queue kind and whether a task came
// back, how many and how long. It shows what the worker's pollers get from the server when
// tasks wait (a poll that returns empty after its long-poll, or one that takes long to bring a
// task), and the start's and the task completion's round trips.
type rpcStats struct {
	mu    sync.Mutex
	calls map[string][]time.Duration
}

func newRPCStats() *rpcStats { return &rpcStats{calls: map[string][]time.Duration{}} }

func (s *rpcStats) interceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		began := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		took := time.Since(began)
		name := path.Base(method)
		if p, ok := req.(*workflowservice.PollWorkflowTaskQueueRequest); ok {
			kind := "normal"
			if p.GetTaskQueue().GetKind() == enumspb.TASK_QUEUE_KIND_STICKY {
				kind = "sticky"
			}
			got := "empty"
			if r, ok := reply.(*workflowservice.PollWorkflowTaskQueueResponse); ok && len(r.GetTaskToken()) > 0 {
				got = "task"
			}
			if err != nil {
				got = "error"
			}
			if kind == "normal" {
				name = fmt.Sprintf("PollWorkflowTaskQueue %s normal (%s)", p.GetTaskQueue().GetName(), got)
			} else {
				name = fmt.Sprintf("PollWorkflowTaskQueue sticky (%s)", got)
			}
		} else if err != nil {
			name += " (error)"
		}
		s.mu.Lock()
		s.calls[name] = append(s.calls[name], took)
		s.mu.Unlock()
		return err
	}
}

// table is one line per method: calls, p50, p99 and max round trip.
func (s *rpcStats) table() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.calls))
	for n := range s.calls {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "%-60s %7s %9s %9s %9s\n", "Temporal call", "calls", "p50", "p99", "max")
	for _, n := range names {
		d := slices.Clone(s.calls[n])
		slices.Sort(d)
		fmt.Fprintf(&b, "%-60s %7d %9s %9s %9s\n", n, len(d), d[len(d)/2].Round(time.Millisecond),
			d[len(d)*99/100].Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond))
	}
	return b.String()
}
