package gcpfake

// regIAMState is one Server's state of Artifact Registry, IAM and the
// project policies (Server.ar; reset clears it). Every use holds s.mu
// (handlers run under it).
type regIAMState struct {
	repos    map[string]*arRepo      // by name: projects/<id>/locations/<l>/repositories/<r>
	ops      map[string]*arOperation // by name: projects/<id>/locations/<l>/operations/<uuid>
	packages map[string][]string     // repository name -> package ids (tests seed them)
	// pendingPolls is how many answers about an operation started from
	// now on say it is running before one says it is done (tests set it to
	// exercise the clients' polling; 0: done at once). A test's setting,
	// it survives Reset.
	pendingPolls int

	accounts map[string]map[string]*iamAccount // project id -> account id -> account
	policies map[string]*projectPolicy         // project id -> the project's IAM policy
}

// regIAM is s's state of these products. The caller holds s.mu.
func (s *Server) regIAM() *regIAMState { return &s.ar }

// arOperation is one long-running operation of Artifact Registry. Its
// result is fixed when it starts; pending is how many more answers about
// it (the starting call's, then each operations.get) say it is running.
type arOperation struct {
	name     string
	pending  int
	response map[string]any // the Any: "@type" and the message's fields
}

// answer is the Operation as the API answers it now; a running answer
// uses up one of pending.
func (op *arOperation) answer() map[string]any {
	out := map[string]any{"name": op.name,
		"metadata": map[string]any{"@type": "type.googleapis.com/google.devtools.artifactregistry.v1.OperationMetadata"}}
	if op.pending > 0 {
		op.pending--
		return out
	}
	out["done"] = true
	out["response"] = op.response
	return out
}

// startAROperation records an operation whose result is response (a message
// under its type URL) and answers it: done at once unless the test asked
// for pending answers.
func (c *call) startAROperation(location string, response map[string]any) map[string]any {
	st := c.s.regIAM()
	op := &arOperation{name: "projects/" + c.project + "/locations/" + location + "/operations/" + arOperationID(),
		pending: st.pendingPolls, response: response}
	st.ops[op.name] = op
	return op.answer()
}

// getAROperation is artifactregistry.projects.locations.operations.get.
func getAROperation(c *call) (any, error) {
	name := "projects/" + c.project + "/locations/" + c.flat["locationsId"] + "/operations/" + c.flat["operationsId"]
	op := c.s.regIAM().ops[name]
	if op == nil {
		return nil, notFound("Operation %s not found.", name)
	}
	return op.answer(), nil
}

// arOperationID is a random RFC 4122 version 4 id, as operation ids are.
func arOperationID() string {
	h := []byte(randomHex(16))
	h[12] = '4'
	h[16] = "89ab"[h[16]%4]
	return string(h[0:8]) + "-" + string(h[8:12]) + "-" + string(h[12:16]) + "-" + string(h[16:20]) + "-" + string(h[20:32])
}
