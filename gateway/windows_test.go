package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// windowed is a gateway that declares w.
type windowed struct {
	namedGateway
	w Windows
}

func (g windowed) Windows() Windows { return g.w }

func TestWindowsOf(t *testing.T) {
	t.Parallel()
	defaults := Windows{NotFoundSettle: DefaultNotFoundSettle, LateSuccess: DefaultLateSuccess}
	require.Equal(t, defaults, WindowsOf(namedGateway{"none"}), "an adapter that declares nothing")
	require.Equal(t, defaults, WindowsOf(windowed{namedGateway{"zero"}, Windows{}}), "an adapter that declares zeros")
	require.Equal(t, Windows{NotFoundSettle: 10 * time.Minute, LateSuccess: DefaultLateSuccess},
		WindowsOf(windowed{namedGateway{"half"}, Windows{NotFoundSettle: 10 * time.Minute}}))
	require.Equal(t, Windows{NotFoundSettle: DefaultNotFoundSettle, LateSuccess: time.Hour},
		WindowsOf(windowed{namedGateway{"other half"}, Windows{NotFoundSettle: -time.Second, LateSuccess: time.Hour}}))
	both := Windows{NotFoundSettle: 30 * time.Second, LateSuccess: 2 * time.Hour}
	require.Equal(t, both, WindowsOf(windowed{namedGateway{"both"}, both}))
}
