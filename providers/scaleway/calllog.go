package scaleway

import (
	"net/http"
	"strings"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/spec"
)

// describe names a REST call for the call log: the product is the path's
// first segment (mnq, rdb, secret-manager …), the operation its method and
// path, the region or zone the path names.
func describe(req *http.Request) providers.Call {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	c := providers.Call{Provider: spec.Scaleway, Service: parts[0], Operation: req.Method + " " + req.URL.Path}
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "regions" || parts[i] == "zones" {
			c.Region = parts[i+1]
		}
	}
	return c
}
