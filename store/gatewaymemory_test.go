package store_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
)

func TestGatewayMemory(t *testing.T) {
	for name, m := range map[string]gateway.Memory{"postgres": st.GatewayMemory(), "map": &gateway.MapMemory{}} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			_, found, err := m.Recall(ctx, "wave", "ref-1")
			require.NoError(t, err)
			assert.False(t, found)

			require.NoError(t, m.Remember(ctx, "wave", "ref-1", []byte(`{"session":"cos-1"}`)))
			require.NoError(t, m.Remember(ctx, "orange", "ref-1", []byte(`{"pay_token":"p"}`)))
			data, found, err := m.Recall(ctx, "wave", "ref-1")
			require.NoError(t, err)
			require.True(t, found)
			assert.JSONEq(t, `{"session":"cos-1"}`, string(data))

			// Remembering again replaces; keys are scoped by gateway.
			require.NoError(t, m.Remember(ctx, "wave", "ref-1", []byte(`{"session":"cos-2"}`)))
			data, _, err = m.Recall(ctx, "wave", "ref-1")
			require.NoError(t, err)
			assert.JSONEq(t, `{"session":"cos-2"}`, string(data))
			data, _, err = m.Recall(ctx, "orange", "ref-1")
			require.NoError(t, err)
			assert.JSONEq(t, `{"pay_token":"p"}`, string(data))
		})
	}
}
