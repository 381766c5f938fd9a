package workflows

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

// TestClientCompression: gzip only across a network unless the setting says otherwise.
func TestClientCompression(t *testing.T) {
	for _, tc := range []struct {
		setting, address string
		gzip             bool
	}{
		{"", "127.0.0.1:7233", false},
		{"", "localhost:7233", false},
		{"", "[::1]:7233", false},
		{"", "temporal.internal:7233", true},
		{"", "10.0.0.5:7233", true},
		{"gzip", "127.0.0.1:7233", true},
		{"none", "temporal.internal:7233", false},
	} {
		c, err := ClientCompression(tc.setting, tc.address)
		require.NoError(t, err)
		_, gzip := c.(*client.GrpcCompressionGzip)
		assert.Equal(t, tc.gzip, gzip, "%q towards %s", tc.setting, tc.address)
	}
	_, err := ClientCompression("zstd", "127.0.0.1:7233")
	assert.ErrorContains(t, err, "TEMPORAL_GRPC_COMPRESSION")
}
