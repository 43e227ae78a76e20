package gcpfake

// Cloud Resource Manager v3: projects.get, what a driver asks to turn a
// project id into the number other APIs' names carry.

func (s *Server) resourceManager() product {
	return product{api: "cloudresourcemanager", version: "v3", handlers: map[string]handler{
		"cloudresourcemanager.projects.get": getProject,
	}}
}

// getProject answers for projects/ID or projects/NUMBER alike, with the
// number in name, as GCP does. The check before it has refused a project
// the caller may not see.
func getProject(c *call) (any, error) {
	id := c.project
	num := c.s.number(id)
	return map[string]any{
		"name":        "projects/" + num,
		"projectId":   id,
		"state":       "ACTIVE",
		"displayName": id,
		"createTime":  c.s.started,
		"etag":        `W/"` + num + `"`,
	}, nil
}
