package temporalserver

import (
	"net"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// newUI builds the Web UI server. Its assets are embedded in the ui-server
// module (ui/assets/local, go:embed, no build tag needed).
func newUI(cfg Config, frontendAddr string) *uiserver.Server {
	return uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                uiHost(cfg.Host),
		Port:                cfg.UIPort,
		TemporalGRPCAddress: frontendAddr,
		EnableUI:            true,
		DefaultNamespace:    cfg.Namespace,
		// Served over plain HTTP, so the CSRF cookie cannot be Secure.
		CORS:     uiconfig.CORS{CookieInsecure: true},
		HideLogs: true,
		// The browser posts payloads to the codec endpoint. This UI has
		// no login, so it has no access token to pass.
		Codec: uiconfig.Codec{Endpoint: cfg.CodecEndpoint},
	}))
}

// uiHost brackets an IPv6 address: the UI joins host and port with
// fmt.Sprintf("%s:%d").
func uiHost(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return "[" + host + "]"
	}
	return host
}
