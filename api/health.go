package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// healthz answers while the process is up.
func (s *Server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readyz answers 200 when Temporal is reachable and the namespace exists.
func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
	defer cancel()
	if _, err := s.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": "temporal is not reachable"})
		return
	}
	if _, err := s.temporal.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: s.namespace}); err != nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": "namespace " + s.namespace + " is not ready"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "namespace": s.namespace})
}
