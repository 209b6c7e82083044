package temporalserver

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
)

// TestFirstCallFindsTheFirstHeadersFrame: the preface and the frames
// before a HEADERS frame are not a call, whatever pieces they arrive in;
// the HEADERS frame is, as soon as its head is in.
func TestFirstCallFindsTheFirstHeadersFrame(t *testing.T) {
	var before bytes.Buffer
	before.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&before, nil)
	require.NoError(t, fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20}))
	require.NoError(t, fr.WriteWindowUpdate(0, 1<<20))
	require.NoError(t, fr.WritePing(false, [8]byte{1, 1, 1, 1, 1, 1, 1, 1})) // 0x01 bytes, as a HEADERS type would be
	var headers bytes.Buffer
	require.NoError(t, http2.NewFramer(&headers, nil).WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0x82}, EndHeaders: true}))
	head := headers.Bytes()[:9]

	for _, size := range []int{1, 2, 5, 9, 24, 1000} {
		var f firstCall
		for p := before.Bytes(); len(p) > 0; p = p[min(size, len(p)):] {
			require.False(t, f.seen(p[:min(size, len(p))]), "piece size %d: no call before the HEADERS frame", size)
		}
		for i := range head[:len(head)-1] {
			require.False(t, f.seen(head[i:i+1]), "piece size %d: a HEADERS frame's head is not whole before its ninth byte", size)
		}
		require.True(t, f.seen(head[len(head)-1:]), "piece size %d", size)
		require.True(t, f.seen(nil), "it stays seen")
	}

	var f firstCall
	require.False(t, f.seen([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")), "HTTP/1 is no call")
}
