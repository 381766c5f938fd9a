package sika_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// TestComposeFile checks docker-compose.yml, which cannot run here (no Docker engine): it parses,
// it has the cluster's shape (Postgres; the Temporal server with persistence and visibility on
// Postgres; the UI; API and worker replicas; one address in front of the API; the monitoring),
// and every file it mounts from the repository exists.
func TestComposeFile(t *testing.T) {
	raw, err := os.ReadFile("docker-compose.yml")
	require.NoError(t, err)
	var compose struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
			Ports       []string          `yaml:"ports"`
			NetworkMode string            `yaml:"network_mode"`
			Deploy      struct {
				Replicas int `yaml:"replicas"`
			} `yaml:"deploy"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &compose))
	s := compose.Services
	for _, name := range []string{"postgres", "temporal", "temporal-ui", "migrate", "api", "lb", "worker", "prometheus", "grafana"} {
		assert.Contains(t, s, name)
	}
	assert.True(t, strings.HasPrefix(s["temporal"].Image, "temporalio/auto-setup:"), s["temporal"].Image)
	assert.Equal(t, "postgres12", s["temporal"].Environment["DB"])
	assert.NotEmpty(t, s["temporal"].Environment["VISIBILITY_DBNAME"])
	assert.NotEqual(t, s["temporal"].Environment["DBNAME"], s["temporal"].Environment["VISIBILITY_DBNAME"])
	assert.True(t, strings.HasPrefix(s["temporal-ui"].Image, "temporalio/ui:"), s["temporal-ui"].Image)
	assert.Equal(t, []string{"api"}, s["api"].Command)
	assert.Equal(t, []string{"worker"}, s["worker"].Command)
	assert.GreaterOrEqual(t, s["api"].Deploy.Replicas, 2)
	assert.GreaterOrEqual(t, s["worker"].Deploy.Replicas, 2)
	assert.Empty(t, s["api"].Ports, "replicas cannot share a host port: the lb publishes 8080")
	assert.Equal(t, []string{"8080:8080"}, s["lb"].Ports)
	for _, name := range []string{"temporal", "temporal-ui", "prometheus", "grafana"} {
		for _, p := range s[name].Ports {
			assert.True(t, strings.HasPrefix(p, "127.0.0.1:"), "%s publishes %s beyond this machine: it has no login", name, p)
		}
	}
	assert.Equal(t, "temporal:7233", s["api"].Environment["TEMPORAL_ADDRESS"])
	// api and worker refuse to start without a sandbox (TEST payments go there); its callbacks go
	// to SIKA_PUBLIC_URL, localhost:8080, which is nginx in the lb's network.
	assert.Equal(t, []string{"sandbox"}, s["sandbox"].Command)
	assert.Equal(t, "service:lb", s["sandbox"].NetworkMode)
	for _, name := range []string{"api", "worker", "sandbox"} {
		assert.Equal(t, "http://lb:8090", s[name].Environment["SIKA_SANDBOX_URL"], name)
		assert.GreaterOrEqual(t, len(s[name].Environment["SIKA_SANDBOX_SECRET"]), 16, name)
	}
	assert.True(t, strings.HasSuffix(s["sandbox"].Environment["SIKA_SANDBOX_ADDR"], ":8090"))
	assert.Equal(t, "redis://redis:6379/0", s["api"].Environment["REDIS_URL"], "one rate limit across the api replicas")
	assert.Contains(t, s, "redis")
	assert.NotEmpty(t, s["api"].Environment["SIKA_PAYLOAD_KEYS"], "every client encrypts Temporal payloads")
	assert.Equal(t, "true", s["temporal-ui"].Environment["TEMPORAL_CODEC_INCLUDE_CREDENTIALS"], "the UI decodes with the console's session")
	for name, svc := range s {
		for _, v := range svc.Volumes {
			src, _, found := strings.Cut(v, ":")
			if !found || !strings.HasPrefix(src, "./") {
				continue // a named volume
			}
			_, err := os.Stat(filepath.FromSlash(src))
			assert.NoError(t, err, "service %s mounts %s", name, src)
		}
	}
}
