package egress_test

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/egress"
)

// TestOwnListenersNeverConnect: a policy that allows loopback, and even
// names the listener's address and host in its allowlist, never connects
// to one of recur's own listeners: by its address, another spelling of
// it, localhost, or any local address when it listens on all of them.
// Another port of the same address is still reached.
func TestOwnListenersNeverConnect(t *testing.T) {
	own := newTarget(t, "127.0.0.1:0", nil)
	all := newTarget(t, "[::]:0", nil)
	if all == nil {
		all = newTarget(t, "0.0.0.0:0", nil)
	}
	other := newTarget(t, "127.0.0.1:0", nil)
	p := egress.Policy{AllowLoopback: true, AllowPrivate: true, AllowHosts: []string{"localhost"},
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	ctx := context.Background()
	require.NoError(t, p.AddOwn(ctx, own.Listener.Addr().String(), "recur's REST API"))
	require.NoError(t, p.AddOwn(ctx, ":"+all.port, "the embedded Temporal frontend"))

	for _, url := range []string{
		own.URL,
		"http://localhost:" + own.port,
		"http://[::ffff:127.0.0.1]:" + own.port,
		"http://127.0.0.1:" + all.port,
		"http://127.9.9.9:" + all.port,
		"http://localhost:" + all.port,
	} {
		_, err := get(t, p, url)
		require.Error(t, err, url)
		refused := egress.AsRefused(err)
		require.NotNil(t, refused, "%s: %v", url, err)
		require.Contains(t, refused.Reason, "a listener of recur itself; always refused", url)
	}
	if ip := firstInterfaceAddress(); ip.IsValid() {
		_, err := get(t, p, "http://"+net.JoinHostPort(ip.String(), all.port))
		require.NotNil(t, egress.AsRefused(err), "%s is this machine's: %v", ip, err)
	}
	require.Zero(t, own.conns.Load(), "the API saw no connection")
	require.Zero(t, all.conns.Load(), "the frontend saw no connection")

	resp, err := get(t, p, other.URL)
	require.NoError(t, err, "another port is not recur's")
	require.Equal(t, 200, resp.StatusCode)

	require.Error(t, p.Check(netip.MustParseAddrPort(own.Listener.Addr().String())))
	require.Contains(t, p.String(), "never reached: recur's REST API 127.0.0.1:"+own.port)
}

// TestOwnByNameIsRefusedBeforeResolution: a listener given by name (the
// Temporal frontend of a cluster, say "temporal:7233") is refused by name
// whatever the name resolves to when dialed, and by the addresses it
// resolved to when added.
func TestOwnByNameIsRefusedBeforeResolution(t *testing.T) {
	own := newTarget(t, "127.0.0.1:0", nil)
	p := egress.Policy{AllowLoopback: true}
	require.NoError(t, p.AddOwn(context.Background(), "localhost:"+own.port, "the Temporal frontend"))
	for _, url := range []string{"http://localhost:" + own.port, own.URL} {
		_, err := get(t, p, url)
		require.NotNil(t, egress.AsRefused(err), "%s: %v", url, err)
	}
	require.Zero(t, own.conns.Load())
	require.Error(t, p.AddOwn(context.Background(), "no-port", "x"))
}

// firstInterfaceAddress is an address of one of this machine's interfaces
// other than loopback, if it has one.
func firstInterfaceAddress() netip.Addr {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && !p.Addr().IsLoopback() && !p.Addr().IsLinkLocalUnicast() {
			return p.Addr()
		}
	}
	return netip.Addr{}
}
