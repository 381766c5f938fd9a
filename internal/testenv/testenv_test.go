package testenv_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"

	"github.com/sikahq/sika/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, func(env *testenv.Env) error {
		// What a store package's migrator would do.
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, env.DatabaseURL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "CREATE TABLE migrated (id int PRIMARY KEY)")
		return err
	}))
}

func TestFreshDatabase(t *testing.T) {
	env := testenv.Current()
	if !strings.HasPrefix(env.DatabaseName, "sika_test_testenv_") {
		t.Errorf("DatabaseName = %q, want sika_test_testenv_<random>", env.DatabaseName)
	}
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, env.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var name string
	var rows int
	if err := conn.QueryRow(ctx, "SELECT current_database(), (SELECT count(*) FROM migrated)").Scan(&name, &rows); err != nil {
		t.Fatal(err)
	}
	if name != env.DatabaseName || rows != 0 {
		t.Errorf("connected to %q with %d rows in migrated; want %q and 0", name, rows, env.DatabaseName)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO migrated VALUES (1)"); err != nil {
		t.Fatal(err)
	}
}

func TestTemporalOnDemand(t *testing.T) {
	start := time.Now()
	addr, err := testenv.Current().TemporalAddress()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("TemporalAddress took %s", time.Since(start).Round(time.Millisecond))
	if again, _ := testenv.Current().TemporalAddress(); again != addr {
		t.Errorf("TemporalAddress changed from %s to %s", addr, again)
	}
	c, err := client.DialContext(t.Context(), client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CheckHealth(t.Context(), &client.CheckHealthRequest{}); err != nil {
		t.Fatal(err)
	}
}
