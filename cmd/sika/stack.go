package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/sikahq/sika/internal/devstack"
)

// runStack runs a command with a throw-away Postgres and Temporal dev server, handed to it in
// SIKA_TEST_DATABASE_URL and SIKA_TEST_TEMPORAL_ADDRESS; `make test` runs `go test` this way so
// that every test package shares one stack (each still gets its own fresh database).
func runStack(ctx context.Context, cfg Config, args []string) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New("usage: sika stack -- COMMAND [ARGS...]")
	}
	logger := cfg.logger("text")
	stack, err := devstack.StartStack(ctx, devstack.StackOptions{Ephemeral: true, Logger: logger})
	if err != nil {
		return err
	}
	defer func() {
		if err := stack.Stop(); err != nil {
			logger.Warn("stop stack", "err", err)
		}
	}()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), stack.Environ()...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", args[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGINT)
		err = <-done
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exitCode(exit.ExitCode())
	}
	return err
}
