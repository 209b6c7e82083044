package temporalserver

import (
	"fmt"
	"io/fs"
	"net"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	uiapi "github.com/temporalio/ui-server/v2/server/api"
	uiauth "github.com/temporalio/ui-server/v2/server/auth"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uicors "github.com/temporalio/ui-server/v2/server/cors"
	uicsrf "github.com/temporalio/ui-server/v2/server/csrf"
	uiheaders "github.com/temporalio/ui-server/v2/server/headers"
	uiroute "github.com/temporalio/ui-server/v2/server/route"
	"github.com/temporalio/ui-server/v2/ui"
)

// uiConfig is the Web UI's config. Its assets are embedded in the
// ui-server module (ui/assets/local, go:embed, no build tag needed).
func uiConfig(cfg Config, frontendAddr string) *uiconfig.Config {
	return &uiconfig.Config{
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
	}
}

// uiHandler is the Web UI as a handler, built as ui-server's NewServer
// (v2.55.0, server/server.go) builds it: the same middleware in the same
// order and the same routes. NewServer's server listens by itself, with
// no timeouts and no connection cap, and keeps its http.Server out of
// reach; recur serves the handler on a listener and server of its own.
// Check NewServer again when the ui-server module is upgraded.
func uiHandler(cfg Config, frontendAddr string) (http.Handler, error) {
	provider, err := uiconfig.NewConfigProviderWithRefresh(uiConfig(cfg, frontendAddr))
	if err != nil {
		return nil, fmt.Errorf("web ui config: %w", err)
	}
	c, _ := provider.GetConfig()
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.Recover())
	e.Use(middleware.Gzip())
	e.Use(uicors.CORSMiddleware(uicors.CORSConfig{
		AllowHeaders: []string{
			echo.HeaderOrigin, echo.HeaderContentType, echo.HeaderAccept,
			echo.HeaderXCSRFToken, echo.HeaderAuthorization, uiauth.AuthorizationExtrasHeader,
			"Caller-Type",
		},
		AllowCredentials: true,
		ConfigProvider:   provider,
	}))
	e.Use(middleware.Secure())
	secure := !c.CORS.CookieInsecure
	e.Use(uicsrf.EnsureTokenCookie(secure))
	e.Use(middleware.CSRFWithConfig(uicsrf.MiddlewareConfig(provider, secure)))
	e.Pre(uiroute.PublicPath(c.PublicPath))
	uiroute.SetHealthRoute(e)
	forward := []uiapi.Middleware{uiheaders.WithForwardHeaders([]string{uiauth.AuthorizationExtrasHeader, "Caller-Type"})}
	if err := uiroute.SetAPIRoutes(e, provider, forward); err != nil {
		return nil, fmt.Errorf("web ui: %w", err)
	}
	uiroute.SetAuthRoutes(e, provider)
	assets, err := ui.Assets()
	if err != nil {
		return nil, fmt.Errorf("web ui assets: %w", err)
	}
	if assets, err = fs.Sub(assets, "local"); err != nil {
		return nil, fmt.Errorf("web ui assets: %w", err)
	}
	if err := uiroute.SetUIRoutes(e, c.PublicPath, assets, provider); err != nil {
		return nil, fmt.Errorf("web ui: %w", err)
	}
	uiroute.SetRenderRoute(e, "/")
	return e, nil
}

// uiHost brackets an IPv6 address: the UI joins host and port with
// fmt.Sprintf("%s:%d").
func uiHost(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return "[" + host + "]"
	}
	return host
}
