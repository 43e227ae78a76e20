package scwfake

import (
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
	"strings"
)

func init() {
	readyHooks[FnNamespaces] = func(s *Server, m map[string]any) {
		if m["status"] == "ready" && m["registry_endpoint"] == "" {
			m["registry_endpoint"] = "rg." + str(m, "region") + ".scw.cloud/funcscw" + strings.ReplaceAll(str(m, "name"), "-", "")
			m["registry_namespace_id"] = s.id()
		}
	}
	readyHooks[Containers] = func(s *Server, m map[string]any) {
		// The real API adds error_message once a container has settled.
		m["error_message"] = ""
	}
	readyHooks[Functions] = func(s *Server, m map[string]any) {
		if m["status"] == "ready" {
			m["ready_at"] = s.ts()
		}
	}
}

// account serves /account/v3.
func (s *Server) account(c *call, rest []string) {
	switch {
	case len(rest) == 1 && rest[0] == "projects" && c.r.Method == http.MethodGet:
		c.list(Projects, "projects", func(m map[string]any) bool { return c.match(m, "organization_id", "name") })
	case len(rest) == 1 && rest[0] == "projects" && c.r.Method == http.MethodPost:
		in, ok := c.decode()
		if !ok {
			return
		}
		id := s.id()
		p := s.project(id, str(in, "organization_id"), str(in, "name"), str(in, "description"))
		s.put(Projects, id, p)
		c.json(200, p)
	case len(rest) == 2 && rest[0] == "projects":
		o, ok := s.get(Projects, rest[1])
		if !ok {
			c.notFound("project", rest[1])
			return
		}
		switch c.r.Method {
		case http.MethodGet:
			c.json(200, o.m)
		case http.MethodPatch:
			in, ok := c.decode()
			if !ok {
				return
			}
			patch(o.m, in, "name", "description")
			o.m["updated_at"] = s.ts()
			c.json(200, o.m)
		case http.MethodDelete:
			s.remove(Projects, rest[1])
			c.noContent()
		}
	default:
		c.json(404, map[string]any{"message": "no such account route"})
	}
}

// patch copies the named keys present in in onto m.
func patch(m, in map[string]any, keys ...string) bool {
	changed := false
	for _, k := range keys {
		if v, ok := in[k]; ok && v != nil {
			m[k] = v
			changed = true
		}
	}
	return changed
}

// iam serves /iam/v1alpha1: applications, policies, rules, API keys.
func (s *Server) iam(c *call, rest []string) {
	if len(rest) == 0 {
		c.json(404, map[string]any{"message": "no such iam route"})
		return
	}
	switch rest[0] {
	case "applications":
		s.applications(c, rest[1:])
	case "policies":
		s.policies(c, rest[1:])
	case "rules":
		s.iamRules(c)
	case "api-keys":
		s.apiKeys(c, rest[1:])
	default:
		c.json(404, map[string]any{"message": "no such iam route"})
	}
}

func (s *Server) applications(c *call, rest []string) {
	if len(rest) == 0 {
		switch c.r.Method {
		case http.MethodGet:
			if c.q.Get("organization_id") == "" {
				c.invalid("organization_id", "required")
				return
			}
			c.list(Applications, "applications", func(m map[string]any) bool {
				if t := c.q.Get("tag"); t != "" && !hasTag(m["tags"], t) {
					return false
				}
				if ids := c.q["application_ids"]; len(ids) > 0 && !contains(ids, str(m, "id")) {
					return false
				}
				return c.match(m, "organization_id", "name")
			})
		case http.MethodPost:
			in, ok := c.decode()
			if !ok {
				return
			}
			id, ts := s.id(), s.ts()
			m := map[string]any{"id": id, "name": str(in, "name"), "description": str(in, "description"),
				"organization_id": str(in, "organization_id"), "tags": strList(in["tags"]), "created_at": ts, "updated_at": ts,
				"editable": true, "deletable": true, "managed": false, "nb_api_keys": 0.0}
			s.put(Applications, id, m)
			c.json(200, m)
		}
		return
	}
	o, ok := s.get(Applications, rest[0])
	if !ok {
		c.notFound("application", rest[0])
		return
	}
	switch c.r.Method {
	case http.MethodGet:
		c.json(200, o.m)
	case http.MethodPatch:
		in, ok := c.decode()
		if !ok {
			return
		}
		patch(o.m, in, "name", "description", "tags")
		o.m["updated_at"] = s.ts()
		c.json(200, o.m)
	case http.MethodDelete:
		s.remove(Applications, rest[0])
		for id, p := range s.objs[Policies] {
			if p.m["application_id"] == rest[0] {
				s.remove(Policies, id)
			}
		}
		c.noContent()
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		for _, z := range strings.Split(y, ",") {
			if z == x {
				return true
			}
		}
	}
	return false
}

func (s *Server) policies(c *call, rest []string) {
	if len(rest) == 0 {
		switch c.r.Method {
		case http.MethodGet:
			if c.q.Get("organization_id") == "" {
				c.invalid("organization_id", "required")
				return
			}
			c.list(Policies, "policies", func(m map[string]any) bool {
				if ids := c.q["application_ids"]; len(ids) > 0 && !contains(ids, str(m, "application_id")) {
					return false
				}
				if n := c.q.Get("policy_name"); n != "" && str(m, "name") != n {
					return false
				}
				return c.match(m, "organization_id")
			})
		case http.MethodPost:
			in, ok := c.decode()
			if !ok {
				return
			}
			id, ts := s.id(), s.ts()
			m := map[string]any{"id": id, "name": str(in, "name"), "description": str(in, "description"),
				"organization_id": str(in, "organization_id"), "tags": strList(in["tags"]), "created_at": ts, "updated_at": ts,
				"editable": true, "deletable": true, "managed": false}
			switch {
			case str(in, "application_id") != "":
				m["application_id"] = str(in, "application_id")
			case str(in, "user_id") != "":
				m["user_id"] = str(in, "user_id")
			case str(in, "group_id") != "":
				m["group_id"] = str(in, "group_id")
			default:
				m["no_principal"] = true
			}
			s.put(Policies, id, m)
			s.setRules(id, m, strList(in["rules"]))
			c.json(200, m)
		}
		return
	}
	o, ok := s.get(Policies, rest[0])
	if !ok {
		c.notFound("policy", rest[0])
		return
	}
	switch c.r.Method {
	case http.MethodGet:
		c.json(200, o.m)
	case http.MethodPatch:
		in, ok := c.decode()
		if !ok {
			return
		}
		patch(o.m, in, "name", "description", "tags")
		o.m["updated_at"] = s.ts()
		c.json(200, o.m)
	case http.MethodDelete:
		s.remove(Policies, rest[0])
		delete(s.rules, rest[0])
		c.noContent()
	}
}

// setRules replaces a policy's rules and its counters.
func (s *Server) setRules(policyID string, p map[string]any, specs []any) []any {
	var rules []map[string]any
	sets, scopes := 0, 0
	out := []any{}
	for _, x := range specs {
		in := strMap(x)
		r := map[string]any{"id": s.id(), "permission_set_names": strList(in["permission_set_names"]),
			"permission_sets_scope_type": "projects", "condition": str(in, "condition")}
		if ids := strList(in["project_ids"]); len(ids) > 0 {
			r["project_ids"] = ids
			scopes += len(ids)
		} else {
			r["organization_id"] = str(in, "organization_id")
			r["permission_sets_scope_type"] = "organization"
			scopes++
		}
		sets += len(strList(in["permission_set_names"]))
		rules = append(rules, r)
		out = append(out, r)
	}
	s.rules[policyID] = rules
	p["nb_rules"], p["nb_permission_sets"], p["nb_scopes"] = float64(len(rules)), float64(sets), float64(scopes)
	return out
}

func (s *Server) iamRules(c *call) {
	switch c.r.Method {
	case http.MethodGet:
		id := c.q.Get("policy_id")
		if _, ok := s.get(Policies, id); !ok {
			c.notFound("policy", id)
			return
		}
		out := []any{}
		for _, r := range s.rules[id] {
			out = append(out, r)
		}
		c.json(200, map[string]any{"rules": out, "total_count": len(out)})
	case http.MethodPut:
		in, ok := c.decode()
		if !ok {
			return
		}
		id := str(in, "policy_id")
		p, ok := s.get(Policies, id)
		if !ok {
			c.notFound("policy", id)
			return
		}
		c.json(200, map[string]any{"rules": s.setRules(id, p.m, strList(in["rules"]))})
	}
}

func (s *Server) apiKeys(c *call, rest []string) {
	if len(rest) == 0 {
		if c.r.Method != http.MethodPost {
			c.list(APIKeys, "api_keys", func(m map[string]any) bool { return c.match(m, "application_id") })
			return
		}
		in, ok := c.decode()
		if !ok {
			return
		}
		key := "SCW" + strings.ToUpper(strings.ReplaceAll(s.id(), "-", "")[:17])
		ts := s.ts()
		m := map[string]any{"access_key": key, "application_id": str(in, "application_id"), "created_at": ts,
			"creation_ip": "127.0.0.1", "default_project_id": str(in, "default_project_id"), "deletable": true,
			"description": str(in, "description"), "editable": true, "expires_at": in["expires_at"], "managed": false,
			"secret_key": s.id(), "updated_at": ts}
		s.put(APIKeys, key, m)
		c.json(200, m)
		// The secret key is shown once.
		cp := map[string]any{}
		for k, v := range m {
			cp[k] = v
		}
		cp["secret_key"] = nil
		s.objs[APIKeys][key].m = cp
		return
	}
	o, ok := s.get(APIKeys, rest[0])
	if !ok {
		c.notFound("api_key", rest[0])
		return
	}
	switch c.r.Method {
	case http.MethodGet:
		c.json(200, o.m)
	case http.MethodPatch:
		in, ok := c.decode()
		if !ok {
			return
		}
		patch(o.m, in, "description", "default_project_id")
		o.m["updated_at"] = s.ts()
		c.json(200, o.m)
	case http.MethodDelete:
		s.remove(APIKeys, rest[0])
		c.noContent()
	}
}

// functions serves /functions/v1beta1/regions/{region}.
func (s *Server) functions(c *call, rest []string) {
	if len(rest) == 0 {
		c.json(404, map[string]any{"message": "no such route"})
		return
	}
	switch rest[0] {
	case "namespaces":
		s.fnNamespaces(c, rest[1:])
	case "functions":
		s.fnFunctions(c, rest[1:])
	default:
		c.json(404, map[string]any{"message": "no such route"})
	}
}

func secretEnvList(v any) []any {
	out := []any{}
	for _, x := range strList(v) {
		e := strMap(x)
		out = append(out, map[string]any{"key": str(e, "key"), "hashed_value": "$argon2id$fake$" + fmt.Sprint(crc32.ChecksumIEEE([]byte(str(e, "value"))))})
	}
	return out
}

func (s *Server) fnNamespaces(c *call, rest []string) {
	if len(rest) == 0 {
		switch c.r.Method {
		case http.MethodGet:
			c.list(FnNamespaces, "namespaces", func(m map[string]any) bool {
				return m["region"] == c.region && c.match(m, "project_id", "organization_id", "name")
			})
		case http.MethodPost:
			in, ok := c.decode()
			if !ok {
				return
			}
			org, ok := c.projectOrg(str(in, "project_id"))
			if !ok {
				return
			}
			id, ts := s.id(), s.ts()
			m := map[string]any{"id": id, "name": str(in, "name"), "project_id": str(in, "project_id"), "organization_id": org,
				"description": str(in, "description"), "environment_variables": strMap(in["environment_variables"]),
				"secret_environment_variables": secretEnvList(in["secret_environment_variables"]), "error_message": nil,
				"region": c.region, "registry_endpoint": "", "registry_namespace_id": "", "tags": strList(in["tags"]),
				"vpc_integration_activated": false, "created_at": ts, "updated_at": ts}
			s.schedule(s.put(FnNamespaces, id, m), "pending", "ready", false)
			c.json(200, m)
		}
		return
	}
	id := rest[0]
	if _, ok := s.get(FnNamespaces, id); !ok {
		c.untypedNotFound("Namespace")
		return
	}
	switch c.r.Method {
	case http.MethodGet:
		m, ok := s.read(FnNamespaces, id)
		if !ok {
			c.untypedNotFound("Namespace")
			return
		}
		c.json(200, m)
	case http.MethodPatch:
		in, ok := c.decode()
		if !ok {
			return
		}
		o, _ := s.get(FnNamespaces, id)
		patch(o.m, in, "description", "environment_variables", "tags")
		if _, set := in["secret_environment_variables"]; set && in["secret_environment_variables"] != nil {
			o.m["secret_environment_variables"] = secretEnvList(in["secret_environment_variables"])
		}
		o.m["updated_at"] = s.ts()
		if in["environment_variables"] != nil || in["secret_environment_variables"] != nil {
			s.schedule(o, "pending", "ready", false)
		}
		c.json(200, o.m)
	case http.MethodDelete:
		o, _ := s.get(FnNamespaces, id)
		if o.m["status"] == "deleting" && !o.has {
			c.untypedNotFound("Namespace")
			return
		}
		s.schedule(o, "deleting", "", true)
		c.json(200, o.m)
	}
}

func (s *Server) fnFunctions(c *call, rest []string) {
	if len(rest) == 0 {
		switch c.r.Method {
		case http.MethodGet:
			c.list(Functions, "functions", s.inNamespace(c, FnNamespaces))
		case http.MethodPost:
			s.createFunction(c)
		}
		return
	}
	id := rest[0]
	o, ok := s.get(Functions, id)
	if !ok {
		c.untypedNotFound("Function")
		return
	}
	if len(rest) == 2 && rest[1] == "upload-url" {
		c.json(200, map[string]any{"url": "http://" + c.r.Host + "/upload/" + id,
			"headers": map[string]any{"content-type": []any{"application/octet-stream"}, "content-length": []any{c.q.Get("content_length")}}})
		return
	}
	if len(rest) == 2 && rest[1] == "deploy" && c.r.Method == http.MethodPost {
		if _, uploaded := s.code[id]; !uploaded {
			c.invalid("function_id", "no code was uploaded")
			return
		}
		s.schedule(o, "pending", "ready", false)
		c.json(200, o.m)
		return
	}
	s.function(c, o, id)
}

// inNamespace is the listing filter of what a namespace holds (functions,
// containers): they carry no project, so project_id is the namespace's.
func (s *Server) inNamespace(c *call, namespaces string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		if m["region"] != c.region {
			return false
		}
		if p := c.q.Get("project_id"); p != "" {
			ns, ok := s.get(namespaces, str(m, "namespace_id"))
			if !ok || ns.m["project_id"] != p {
				return false
			}
		}
		return c.match(m, "namespace_id", "name")
	}
}

// sandboxOf is the sandbox a create gets: the API accepts an unset one and
// picks v2 (recorded: the SDK sent "unknown_sandbox" and got v2 back).
func sandboxOf(in map[string]any) string {
	if sandbox := str(in, "sandbox"); sandbox != "" && !strings.HasPrefix(sandbox, "unknown_") {
		return sandbox
	}
	return "v2"
}

// knownEnums refuses an update that names an enum "unknown_…", as the API
// does.
func (c *call) knownEnums(in map[string]any, keys ...string) bool {
	for _, k := range keys {
		if v := str(in, k); strings.HasPrefix(v, "unknown_") {
			c.invalid(k, fmt.Sprintf("%q is not a value", v))
			return false
		}
	}
	return true
}

// patchTimeout sets a timeout an update names, in the API's "300s" form.
func patchTimeout(m, in map[string]any) {
	if v, ok := in["timeout"]; ok && v != nil {
		m["timeout"] = fmt.Sprintf("%gs", num(in, "timeout", 300))
	}
}

func (s *Server) createFunction(c *call) {
	in, ok := c.decode()
	if !ok {
		return
	}
	ns, ok := s.get(FnNamespaces, str(in, "namespace_id"))
	if !ok {
		c.untypedNotFound("Namespace")
		return
	}
	privacy, ok := c.enum(in, "privacy", "public", "private")
	if !ok {
		return
	}
	httpOption, ok := c.enum(in, "http_option", "enabled", "redirected")
	if !ok {
		return
	}
	sandbox := sandboxOf(in)
	if str(in, "runtime") == "" || strings.HasPrefix(str(in, "runtime"), "unknown") {
		c.invalid("runtime", "required")
		return
	}
	id, ts := s.id(), s.ts()
	mem := num(in, "memory_limit", 256)
	m := map[string]any{"id": id, "name": str(in, "name"), "namespace_id": str(in, "namespace_id"),
		"description": str(in, "description"), "environment_variables": strMap(in["environment_variables"]),
		"secret_environment_variables": secretEnvList(in["secret_environment_variables"]),
		"min_scale":                    num(in, "min_scale", 0), "max_scale": num(in, "max_scale", 20), "memory_limit": mem,
		"cpu_limit": mem * 140 / 256, "timeout": fmt.Sprintf("%gs", num(in, "timeout", 300)),
		"runtime": str(in, "runtime"), "handler": str(in, "handler"), "privacy": privacy, "http_option": httpOption,
		"sandbox": sandbox, "tags": strList(in["tags"]), "status": "created", "error_message": nil,
		"build_message": "", "runtime_message": "", "ready_at": nil, "private_network_id": nil, "region": c.region,
		"domain_name": strings.ReplaceAll(str(ns.m, "name"), "-", "") + "-" + str(in, "name") + ".functions.fnc." + c.region + ".scw.cloud",
		"created_at":  ts, "updated_at": ts}
	s.put(Functions, id, m)
	c.json(200, m)
}

// function serves one function: read, update, delete.
func (s *Server) function(c *call, o *object, id string) {
	switch c.r.Method {
	case http.MethodGet:
		m, ok := s.read(Functions, id)
		if !ok {
			c.untypedNotFound("Function")
			return
		}
		c.json(200, m)
	case http.MethodPatch:
		in, ok := c.decode()
		if !ok || !c.knownEnums(in, "privacy", "http_option", "sandbox") {
			return
		}
		patch(o.m, in, "description", "environment_variables", "tags", "min_scale", "max_scale", "memory_limit", "handler", "privacy", "http_option", "sandbox")
		if in["secret_environment_variables"] != nil {
			o.m["secret_environment_variables"] = secretEnvList(in["secret_environment_variables"])
		}
		patchTimeout(o.m, in)
		o.m["updated_at"] = s.ts()
		if o.m["status"] != "created" {
			s.schedule(o, "pending", "ready", false)
		}
		c.json(200, o.m)
	case http.MethodDelete:
		s.schedule(o, "deleting", "", true)
		c.json(200, o.m)
	}
}

// containers serves /containers/v1/regions/{region}.
func (s *Server) containers(c *call, rest []string) {
	if len(rest) == 0 {
		c.json(404, map[string]any{"message": "no such route"})
		return
	}
	switch rest[0] {
	case "namespaces":
		s.ctNamespaces(c, rest[1:])
	case "containers":
		s.ctContainers(c, rest[1:])
	default:
		c.json(404, map[string]any{"message": "no such route"})
	}
}

func (s *Server) ctNamespaces(c *call, rest []string) {
	if len(rest) == 0 {
		switch c.r.Method {
		case http.MethodGet:
			c.list(CtNamespaces, "namespaces", func(m map[string]any) bool {
				return m["region"] == c.region && c.match(m, "project_id", "organization_id", "name")
			})
		case http.MethodPost:
			in, ok := c.decode()
			if !ok {
				return
			}
			org, ok := c.projectOrg(str(in, "project_id"))
			if !ok {
				return
			}
			id, ts := s.id(), s.ts()
			m := map[string]any{"id": id, "name": str(in, "name"), "project_id": str(in, "project_id"), "organization_id": org,
				"description": str(in, "description"), "environment_variables": strMap(in["environment_variables"]),
				"secret_environment_variables": hashedMap(in["secret_environment_variables"]), "region": c.region,
				"tags": strList(in["tags"]), "created_at": ts, "updated_at": ts}
			s.schedule(s.put(CtNamespaces, id, m), "creating", "ready", false)
			c.json(200, m)
		}
		return
	}
	id := rest[0]
	o, ok := s.get(CtNamespaces, id)
	if !ok {
		c.notFound("namespace", id)
		return
	}
	switch c.r.Method {
	case http.MethodGet:
		m, ok := s.read(CtNamespaces, id)
		if !ok {
			c.notFound("namespace", id)
			return
		}
		c.json(200, m)
	case http.MethodPatch:
		in, ok := c.decode()
		if !ok {
			return
		}
		patch(o.m, in, "description", "environment_variables", "tags")
		if in["secret_environment_variables"] != nil {
			o.m["secret_environment_variables"] = hashedMap(in["secret_environment_variables"])
		}
		o.m["updated_at"] = s.ts()
		s.schedule(o, "updating", "ready", false)
		c.json(200, o.m)
	case http.MethodDelete:
		s.schedule(o, "deleting", "", true)
		c.json(200, o.m)
	}
}

func hashedMap(v any) map[string]any {
	out := map[string]any{}
	for k, x := range strMap(v) {
		out[k] = "$argon2id$fake$" + fmt.Sprint(crc32.ChecksumIEEE([]byte(fmt.Sprint(x))))
	}
	return out
}

func (s *Server) ctContainers(c *call, rest []string) {
	if len(rest) == 0 {
		switch c.r.Method {
		case http.MethodGet:
			c.list(Containers, "containers", s.inNamespace(c, CtNamespaces))
		case http.MethodPost:
			s.createContainer(c)
		}
		return
	}
	id := rest[0]
	o, ok := s.get(Containers, id)
	if !ok {
		c.notFound("container", id)
		return
	}
	s.container(c, o, id)
}

func (s *Server) createContainer(c *call) {
	in, ok := c.decode()
	if !ok {
		return
	}
	ns, ok := s.get(CtNamespaces, str(in, "namespace_id"))
	if !ok {
		c.notFound("namespace", str(in, "namespace_id"))
		return
	}
	privacy, ok := c.enum(in, "privacy", "public", "private")
	if !ok {
		return
	}
	protocol, ok := c.enum(in, "protocol", "http1", "h2c")
	if !ok {
		return
	}
	sandbox := sandboxOf(in)
	id, ts := s.id(), s.ts()
	m := map[string]any{"id": id, "name": str(in, "name"), "namespace_id": str(in, "namespace_id"),
		"description": str(in, "description"), "status": "creating", "created_at": ts, "updated_at": ts,
		"min_scale": num(in, "min_scale", 0), "max_scale": num(in, "max_scale", 5),
		"memory_limit_bytes": num(in, "memory_limit_bytes", 2048000000), "mvcpu_limit": num(in, "mvcpu_limit", 1000),
		"timeout": fmt.Sprintf("%gs", num(in, "timeout", 300)), "privacy": privacy, "image": str(in, "image"),
		"protocol": protocol, "port": num(in, "port", 8080), "https_connections_only": in["https_connections_only"] == true,
		"sandbox": sandbox, "local_storage_limit_bytes": num(in, "local_storage_limit_bytes", 1000000000),
		"scaling_option": map[string]any{"concurrent_requests_threshold": 50.0}, "tags": strList(in["tags"]),
		"command": strList(in["command"]), "args": strList(in["args"]), "environment_variables": strMap(in["environment_variables"]),
		"public_endpoint": "https://" + strings.ReplaceAll(str(ns.m, "name"), "-", "") + "-" + str(in, "name") + ".functions.fnc." + c.region + ".scw.cloud",
		"liveness_probe":  map[string]any{"failure_threshold": 30.0, "interval": "10s", "timeout": "1s", "tcp": map[string]any{}},
		"startup_probe":   nil, "secret_environment_variables": hashedMap(in["secret_environment_variables"]), "region": c.region}
	s.schedule(s.put(Containers, id, m), "creating", "ready", false)
	c.json(200, m)
}

// container serves one container: read, update, delete.
func (s *Server) container(c *call, o *object, id string) {
	switch c.r.Method {
	case http.MethodGet:
		m, ok := s.read(Containers, id)
		if !ok {
			c.notFound("container", id)
			return
		}
		c.json(200, m)
	case http.MethodPatch:
		in, ok := c.decode()
		if !ok || !c.knownEnums(in, "privacy", "protocol", "sandbox") {
			return
		}
		patch(o.m, in, "description", "environment_variables", "tags", "min_scale", "max_scale", "memory_limit_bytes",
			"mvcpu_limit", "image", "port", "privacy", "protocol", "sandbox", "command", "args")
		if in["secret_environment_variables"] != nil {
			o.m["secret_environment_variables"] = hashedMap(in["secret_environment_variables"])
		}
		patchTimeout(o.m, in)
		o.m["updated_at"] = s.ts()
		delete(o.m, "error_message")
		s.schedule(o, "updating", "ready", false)
		c.json(200, o.m)
	case http.MethodDelete:
		delete(o.m, "error_message")
		s.schedule(o, "deleting", "", true)
		c.json(200, o.m)
	}
}

// registry serves /registry/v1/regions/{region}.
func (s *Server) registry(c *call, rest []string) {
	if len(rest) == 0 || rest[0] != "namespaces" {
		c.json(404, map[string]any{"message": "no such route"})
		return
	}
	if len(rest) == 1 {
		switch c.r.Method {
		case http.MethodGet:
			c.list(Registries, "namespaces", func(m map[string]any) bool {
				return m["region"] == c.region && c.match(m, "project_id", "organization_id", "name")
			})
		case http.MethodPost:
			in, ok := c.decode()
			if !ok {
				return
			}
			org, ok := c.projectOrg(str(in, "project_id"))
			if !ok {
				return
			}
			// Registry namespace names are unique per region across every
			// organization: the endpoint is rg.<region>.scw.cloud/<name>.
			for _, o := range s.objs[Registries] {
				if o.m["name"] == str(in, "name") && o.m["region"] == c.region {
					c.conflict("namespace", str(o.m, "id"), "a namespace with this name already exists")
					return
				}
			}
			id, ts := s.id(), s.ts()
			m := map[string]any{"id": id, "name": str(in, "name"), "description": str(in, "description"),
				"organization_id": org, "project_id": str(in, "project_id"), "status": "ready", "status_message": "",
				"endpoint": "rg." + c.region + ".scw.cloud/" + str(in, "name"), "is_public": in["is_public"] == true,
				"size": 0.0, "image_count": 0.0, "region": c.region, "created_at": ts, "updated_at": ts}
			s.put(Registries, id, m)
			c.json(200, m)
		}
		return
	}
	id := rest[1]
	o, ok := s.get(Registries, id)
	if !ok {
		c.untypedNotFound("Namespace")
		return
	}
	switch c.r.Method {
	case http.MethodGet:
		m, ok := s.read(Registries, id)
		if !ok {
			c.untypedNotFound("Namespace")
			return
		}
		c.json(200, m)
	case http.MethodPatch:
		in, ok := c.decode()
		if !ok {
			return
		}
		patch(o.m, in, "description", "is_public")
		o.m["updated_at"] = s.ts()
		c.json(200, o.m)
	case http.MethodDelete:
		s.schedule(o, "deleting", "", true)
		c.json(200, o.m)
	}
}

// secrets serves /secret-manager/v1beta1/regions/{region}.
func (s *Server) secrets(c *call, rest []string) {
	if len(rest) == 0 || rest[0] != "secrets" {
		c.json(404, map[string]any{"message": "no such route"})
		return
	}
	if len(rest) == 1 {
		switch c.r.Method {
		case http.MethodGet:
			c.list(Secrets, "secrets", listedSecret(c))
		case http.MethodPost:
			s.createSecret(c)
		}
		return
	}
	id := rest[1]
	o, ok := s.get(Secrets, id)
	if !ok {
		c.notFound("secret", id)
		return
	}
	if len(rest) >= 3 && rest[2] == "versions" {
		s.secretVersions(c, o, rest[3:])
		return
	}
	s.secret(c, o)
}

// listedSecret is the secrets listing's filter: a soft-deleted secret is
// listed only when scheduled_for_deletion asks for it, and every tags
// parameter must match.
func listedSecret(c *call) func(map[string]any) bool {
	deleted := c.q.Get("scheduled_for_deletion") == "true"
	return func(m map[string]any) bool {
		if (m["deletion_requested_at"] != nil) != deleted || m["region"] != c.region {
			return false
		}
		for _, t := range c.q["tags"] {
			if !hasTag(m["tags"], t) {
				return false
			}
		}
		return c.match(m, "project_id", "organization_id", "name", "path")
	}
}

func (s *Server) createSecret(c *call) {
	in, ok := c.decode()
	if !ok {
		return
	}
	if _, ok := c.projectOrg(str(in, "project_id")); !ok {
		return
	}
	typ, ok := c.enum(in, "type", "opaque", "certificate", "key_value", "basic_credentials", "database_credentials", "ssh_key")
	if !ok {
		return
	}
	path := str(in, "path")
	if path == "" {
		path = "/"
	}
	for _, o := range s.objs[Secrets] {
		if o.m["name"] == str(in, "name") && o.m["path"] == path && o.m["project_id"] == str(in, "project_id") &&
			o.m["region"] == c.region && o.m["deletion_requested_at"] == nil {
			c.conflict("secret", str(o.m, "id"), "a secret with this name and path already exists")
			return
		}
	}
	id, ts := s.id(), s.ts()
	m := map[string]any{"id": id, "project_id": str(in, "project_id"), "name": str(in, "name"), "status": "ready",
		"created_at": ts, "updated_at": ts, "tags": strList(in["tags"]), "version_count": 0.0,
		"description": str(in, "description"), "managed": false, "protected": in["protected"] == true,
		"type": typ, "path": path, "ephemeral_policy": nil, "used_by": []any{}, "deletion_requested_at": nil,
		"key_id": nil, "region": c.region}
	s.put(Secrets, id, m)
	c.json(200, m)
}

// secret serves one secret: read, update, (soft) delete.
func (s *Server) secret(c *call, o *object) {
	switch c.r.Method {
	case http.MethodGet:
		c.json(200, o.m)
	case http.MethodPatch:
		in, ok := c.decode()
		if !ok {
			return
		}
		patch(o.m, in, "name", "tags", "description", "path")
		o.m["updated_at"] = s.ts()
		c.json(200, o.m)
	case http.MethodDelete:
		if o.m["protected"] == true {
			c.invalid("secret_id", "the secret is protected")
			return
		}
		// Soft delete: the secret still reads, status ready, with
		// deletion_requested_at set.
		o.m["deletion_requested_at"] = s.ts()
		c.noContent()
	}
}

func versionKey(sid string, rev float64) string { return sid + "/" + strconv.Itoa(int(rev)) }

// versionsOf is a secret's versions, oldest first.
func (s *Server) versionsOf(sid string) []map[string]any {
	var out []map[string]any
	for _, id := range s.order[Versions] {
		if v := s.objs[Versions][id]; v != nil && v.m["secret_id"] == sid {
			out = append(out, v.m)
		}
	}
	return out
}

func (s *Server) secretVersions(c *call, sec *object, rest []string) {
	sid := str(sec.m, "id")
	if len(rest) == 0 {
		switch c.r.Method {
		case http.MethodGet:
			c.list(Versions, "versions", func(m map[string]any) bool { return m["secret_id"] == sid })
		case http.MethodPost:
			s.addVersion(c, sec)
		}
		return
	}
	v := s.version(sid, rest[0])
	if v == nil {
		c.notFound("secret_version", rest[0])
		return
	}
	rev := num(v, "revision", 0)
	switch {
	case len(rest) == 2 && rest[1] == "access":
		if v["status"] != "enabled" {
			c.invalid("revision", "the version is not enabled")
			return
		}
		data := s.versionData[sid][int(rev)]
		c.json(200, map[string]any{"secret_id": sid, "revision": rev, "data": base64.StdEncoding.EncodeToString(data),
			"data_crc32": float64(crc32.ChecksumIEEE(data)), "type": sec.m["type"]})
	case c.r.Method == http.MethodGet:
		c.json(200, v)
	case c.r.Method == http.MethodPatch:
		in, ok := c.decode()
		if !ok {
			return
		}
		patch(v, in, "description")
		v["updated_at"] = s.ts()
		c.json(200, v)
	case c.r.Method == http.MethodDelete:
		s.remove(Versions, versionKey(sid, rev))
		delete(s.versionData[sid], int(rev))
		c.noContent()
	}
}

// addVersion makes the next revision the latest, disabling the others
// when disable_previous asks.
func (s *Server) addVersion(c *call, sec *object) {
	sid := str(sec.m, "id")
	in, ok := c.decode()
	if !ok {
		return
	}
	data, err := base64.StdEncoding.DecodeString(str(in, "data"))
	if err != nil {
		c.invalid("data", "not base64")
		return
	}
	rev := num(sec.m, "version_count", 0) + 1
	for _, v := range s.versionsOf(sid) {
		v["latest"] = false
		if in["disable_previous"] == true {
			v["status"] = "disabled"
		}
	}
	ts := s.ts()
	m := map[string]any{"revision": rev, "secret_id": sid, "status": "enabled", "created_at": ts, "updated_at": ts,
		"description": in["description"], "latest": true, "ephemeral_properties": nil, "deleted_at": nil,
		"deletion_requested_at": nil, "region": c.region}
	s.put(Versions, versionKey(sid, rev), m)
	if s.versionData[sid] == nil {
		s.versionData[sid] = map[int][]byte{}
	}
	s.versionData[sid][int(rev)] = data
	sec.m["version_count"] = rev
	c.json(200, m)
}

// version resolves a revision as the path names it: a number, "latest" or
// "latest_enabled" (the newest enabled). Nil when there is none.
func (s *Server) version(sid, ref string) map[string]any {
	var v map[string]any
	if ref == "latest" || ref == "latest_enabled" {
		for _, x := range s.versionsOf(sid) {
			if (ref == "latest" && x["latest"] == true) || (ref == "latest_enabled" && x["status"] == "enabled") {
				v = x
			}
		}
	} else if n, err := strconv.Atoi(ref); err == nil {
		if o, ok := s.get(Versions, versionKey(sid, float64(n))); ok {
			v = o.m
		}
	}
	return v
}

// sdb serves /serverless-sqldb/v1alpha1/regions/{region}.
func (s *Server) sdb(c *call, rest []string) {
	if len(rest) == 0 || rest[0] != "databases" {
		c.json(404, map[string]any{"message": "no such route"})
		return
	}
	if len(rest) == 1 {
		switch c.r.Method {
		case http.MethodGet:
			if c.q.Get("project_id") == "" {
				c.invalid("project_id", "required")
				return
			}
			c.list(Databases, "databases", func(m map[string]any) bool {
				return m["region"] == c.region && c.match(m, "project_id", "organization_id", "name")
			})
		case http.MethodPost:
			in, ok := c.decode()
			if !ok {
				return
			}
			org, ok := c.projectOrg(str(in, "project_id"))
			if !ok {
				return
			}
			for _, o := range s.objs[Databases] {
				if o.m["name"] == str(in, "name") && o.m["project_id"] == str(in, "project_id") && o.m["region"] == c.region {
					c.conflict("database", str(o.m, "id"), "a database with this name already exists")
					return
				}
			}
			id := s.id()
			m := map[string]any{"id": id, "name": str(in, "name"), "status": "creating",
				"endpoint":        "postgres://" + id + ".pg.sdb." + c.region + ".scw.cloud:5432/" + str(in, "name") + "?sslmode=require",
				"organization_id": org, "project_id": str(in, "project_id"), "region": c.region, "created_at": s.ts(),
				"cpu_min": num(in, "cpu_min", 0), "cpu_max": num(in, "cpu_max", 15), "cpu_current": 0.0, "started": false,
				"engine_major_version": 16.0}
			s.schedule(s.put(Databases, id, m), "creating", "ready", false)
			c.json(200, m)
		}
		return
	}
	id := rest[1]
	o, ok := s.get(Databases, id)
	if !ok {
		// A deleted database answers 403, not 404 (recorded).
		c.denied("serverless_sqldb_database", "read")
		return
	}
	switch c.r.Method {
	case http.MethodGet:
		m, ok := s.read(Databases, id)
		if !ok {
			c.denied("serverless_sqldb_database", "read")
			return
		}
		c.json(200, m)
	case http.MethodPatch:
		in, ok := c.decode()
		if !ok {
			return
		}
		patch(o.m, in, "cpu_min", "cpu_max")
		c.json(200, o.m)
	case http.MethodDelete:
		// DELETE answers the database as it was (ready); reads then show
		// deleting, then 403.
		out := make(map[string]any, len(o.m))
		for k, v := range o.m {
			out[k] = v
		}
		o.m["status"] = "deleting"
		o.next, o.gone, o.reads, o.has = "", true, max(s.opts.TransientReads, 1), true
		if s.opts.TransientReads < 0 {
			s.remove(Databases, id)
		}
		c.json(200, out)
	}
}

// mnq serves the SQS control plane of /mnq/v1beta1/regions/{region}.
func (s *Server) mnq(c *call, rest []string) {
	if len(rest) == 0 {
		c.json(404, map[string]any{"message": "no such route"})
		return
	}
	switch rest[0] {
	case "activate-sqs", "deactivate-sqs":
		in, ok := c.decode()
		if !ok {
			return
		}
		p := str(in, "project_id")
		key := p + "/" + c.region
		o, exists := s.get(SQSInfo, key)
		if rest[0] == "activate-sqs" {
			if _, ok := c.projectOrg(p); !ok {
				return
			}
			if exists && o.m["status"] == "enabled" {
				c.conflict("sqs_info", p, "SQS is already activated for this project")
				return
			}
			ts := s.ts()
			m := map[string]any{"project_id": p, "region": c.region, "created_at": ts, "updated_at": ts,
				"status": "enabled", "sqs_endpoint_url": s.opts.SQSEndpoint}
			s.put(SQSInfo, key, m)
			s.sqsLag[key] = s.opts.CredentialLag
			c.json(200, m)
			return
		}
		if !exists || o.m["status"] != "enabled" {
			c.notFound("MnqSQSNamespace", p)
			return
		}
		o.m["status"], o.m["updated_at"] = "disabled", s.ts()
		c.json(200, o.m)
	case "sqs-info":
		p := c.q.Get("project_id")
		if _, ok := c.projectOrg(p); !ok {
			return
		}
		key := p + "/" + c.region
		if s.sqsLag[key] > 0 || s.lagNext {
			s.sqsLag[key]--
			s.lagNext = false
			c.denied("sqs_info", "read")
			return
		}
		o, ok := s.get(SQSInfo, key)
		if !ok {
			ts := s.ts()
			c.json(200, map[string]any{"project_id": p, "region": c.region, "created_at": ts, "updated_at": ts,
				"status": "disabled", "sqs_endpoint_url": ""})
			return
		}
		o.m["sqs_endpoint_url"] = s.opts.SQSEndpoint
		c.json(200, o.m)
	case "sqs-credentials":
		s.sqsCredentials(c, rest[1:])
	default:
		c.json(404, map[string]any{"message": "no such route"})
	}
}

func (s *Server) sqsCredentials(c *call, rest []string) {
	if len(rest) == 0 {
		switch c.r.Method {
		case http.MethodGet:
			if c.q.Get("project_id") == "" {
				c.invalid("project_id", "required")
				return
			}
			c.list(SQSCreds, "sqs_credentials", func(m map[string]any) bool {
				return m["region"] == c.region && c.match(m, "project_id", "name")
			})
		case http.MethodPost:
			in, ok := c.decode()
			if !ok {
				return
			}
			p := str(in, "project_id")
			if _, ok := c.projectOrg(p); !ok {
				return
			}
			if info, ok := s.get(SQSInfo, p+"/"+c.region); !ok || info.m["status"] != "enabled" {
				c.denied("sqs_credentials", "create")
				return
			}
			id, ts := s.id(), s.ts()
			perm := strMap(in["permissions"])
			m := map[string]any{"id": id, "name": str(in, "name"), "project_id": p, "region": c.region, "created_at": ts,
				"updated_at": ts, "access_key": strings.ToUpper(strings.ReplaceAll(s.id(), "-", ""))[:20],
				"secret_key": nil, "secret_checksum": fmt.Sprint(crc32.ChecksumIEEE([]byte(id))),
				"permissions": map[string]any{"can_publish": perm["can_publish"] == true, "can_receive": perm["can_receive"] == true,
					"can_manage": perm["can_manage"] == true}}
			s.put(SQSCreds, id, m)
			s.credLag[id] = s.opts.CredentialLag
			out := make(map[string]any, len(m))
			for k, v := range m {
				out[k] = v
			}
			out["secret_key"] = s.id() // shown once
			c.json(200, out)
		}
		return
	}
	id := rest[0]
	o, ok := s.get(SQSCreds, id)
	if !ok || (c.r.Method == http.MethodGet && (s.credLag[id] > 0 || s.lagNext)) {
		if ok {
			s.credLag[id]--
		}
		s.lagNext = false
		c.notFound("sqs_credentials", id)
		return
	}
	switch c.r.Method {
	case http.MethodGet:
		c.json(200, o.m)
	case http.MethodPatch:
		in, ok := c.decode()
		if !ok {
			return
		}
		patch(o.m, in, "name", "permissions")
		o.m["updated_at"] = s.ts()
		c.json(200, o.m)
	case http.MethodDelete:
		s.remove(SQSCreds, id)
		c.noContent()
	}
}
