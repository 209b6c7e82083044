package syncbuf

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWritersAndAReaderShareIt: every write lands whole while another
// goroutine reads (go test -race sees any unguarded access).
func TestWritersAndAReaderShareIt(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, err := b.Write([]byte("line\n"))
				require.NoError(t, err)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	require.Equal(t, strings.Repeat("line\n", 800), b.String())
}
