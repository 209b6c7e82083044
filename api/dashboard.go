package api

import (
	"embed"
	"net/http"
	"path"

	"github.com/gin-gonic/gin"
)

// The dashboard is a page of plain HTML, JavaScript and CSS, with no build
// step and nothing from other sites. It is served without authentication
// and holds no data: the script reads everything through the API, with the
// bearer token the user pastes.
//
//go:embed dashboard
var dashboardFiles embed.FS

// dashboardTypes are the files the dashboard has, by extension.
var dashboardTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// dashboardPolicy lets the page run its own script and style and talk to
// its own origin only: even if some data slipped into the page as markup,
// no inline script or handler would run and nothing could leave for
// another site.
const dashboardPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// routeDashboard serves the dashboard at /dashboard, and / redirects there.
func routeDashboard(r *gin.Engine) {
	r.GET("/", func(c *gin.Context) { c.Redirect(http.StatusFound, "/dashboard") })
	r.GET("/dashboard", func(c *gin.Context) { serveDashboardFile(c, "index.html") })
	r.GET("/dashboard/:file", func(c *gin.Context) { serveDashboardFile(c, c.Param("file")) })
}

func serveDashboardFile(c *gin.Context, name string) {
	ctype, ok := dashboardTypes[path.Ext(name)]
	var data []byte
	var err error
	if ok {
		data, err = dashboardFiles.ReadFile("dashboard/" + name)
	}
	if !ok || err != nil {
		abort(c, http.StatusNotFound, "NotFound", "no such dashboard file: "+name)
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", dashboardPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	c.Data(http.StatusOK, ctype, data)
}
