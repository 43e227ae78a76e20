package gcpfake

// Long-running operations, and the state of the products that have them
// (Cloud SQL Admin v1, Cloud Run v2).
//
// Every mutation of those products answers an operation, which is not
// done (PENDING, or done: false) until it has been read SetOperationPolls
// times; the change it carries (an instance RUNNABLE, a service ready, an
// instance gone) is made when it completes, so a caller that does not wait
// sees the resource as GCP shows it mid-way. A test can make the next
// operation of a method fail (FailNextOperation): it then completes with
// the error, and the change is not made, or is made as the product does
// on failure.
//
// Cloud Run's are google.longrunning.Operation (lro below): the answer is
// {name, metadata, done} and, once done, response (an Any: "@type" plus
// the message's fields, which the GAPIC client resolves through the
// registered protobuf types) or error (a google.rpc.Status). Cloud SQL's
// are its own sql#operation (sqladmin.go), polled with operations.get.

// extra is what these products keep (Server.ex). knobs are a test's
// settings and survive Reset; reset makes state anew.
type extra struct {
	knobs opKnobs
	state *extraState
}

type extraState struct {
	seq          int
	sqlInstances map[string]map[string]*sqlInstance // project id -> instance name
	sqlOps       map[string]map[string]*sqlOp       // project id -> operation name
	sqlReserved  map[string]map[string]bool         // project id -> names of deleted instances
	runServices  map[string]*runService             // full name (project id) -> service
	lros         map[string]*lro                    // full name (project id) -> operation
}

type opKnobs struct {
	polls    map[string]int    // by API (sqladmin, run): reads before an operation is done
	failNext map[string]string // by method id: the message the next operation fails with
	reserve  bool              // Cloud SQL keeps a deleted instance's name
}

// defaultPolls: an operation is done at its first read, so a client must
// poll, and waits once.
const defaultPolls = 1

// extra returns the Server's state of these products. The caller holds
// s.mu.
func (s *Server) extra() *extra { return &s.ex }

// SetOperationPolls sets how many reads of a new operation of api
// ("sqladmin" or "run") answer it as not done; 0 completes it in the
// answer of the call that started it (a test that wants speed), 1 is the
// default. It survives Reset.
func (s *Server) SetOperationPolls(api string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extra().knobs.polls[api] = max(n, 0)
}

// FailNextOperation makes the next operation started by the method
// (sql.users.insert, run.projects.locations.services.create) complete
// with an error carrying message. It survives Reset and fires once.
func (s *Server) FailNextOperation(methodID, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extra().knobs.failNext[methodID] = message
}

// ReserveDeletedNames makes Cloud SQL keep a deleted instance's name, as
// GCP does for up to a week: creating it again answers 409. Off by
// default, so that a test can delete and recreate a name.
func (s *Server) ReserveDeletedNames(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extra().knobs.reserve = on
}

// opStart is what a new operation takes from the knobs: how many reads it
// stays pending, and the failure it ends with ("" for none).
func (c *call) opStart(api string) (polls int, fail string) {
	k := &c.s.extra().knobs
	polls, ok := k.polls[api]
	if !ok {
		polls = defaultPolls
	}
	fail = k.failNext[c.m.ID]
	delete(k.failNext, c.m.ID)
	return polls, fail
}

func (c *call) nextSeq() int {
	st := c.s.extra().state
	st.seq++
	return st.seq
}

// lro is one google.longrunning.Operation.
type lro struct {
	name     string
	polls    int
	fail     string
	metadata map[string]any
	done     bool
	response map[string]any // the Any, once done without error
	err      *apiError
	// finish makes the operation's change when it completes, given the
	// failure it ends with (nil: success) and the call that completes it,
	// and returns the Any response. It holds nothing of the Server (the
	// call gives it), so that extras' weak keys can let a Server go.
	finish func(fail *apiError, c *call) map[string]any
}

// startLRO records a new operation named name (full, project id) and
// returns its JSON. polls of 0 completes it at once.
func (c *call) startLRO(api, name string, metadata map[string]any, finish func(fail *apiError, c *call) map[string]any) map[string]any {
	polls, fail := c.opStart(api)
	op := &lro{name: name, polls: polls, fail: fail, metadata: metadata, finish: finish}
	c.s.extra().state.lros[name] = op
	if polls == 0 {
		op.complete(c)
	}
	return op.json()
}

func (op *lro) complete(c *call) {
	op.done = true
	if op.fail != "" {
		op.err = errorf("INTERNAL", "%s", op.fail)
		op.finish(op.err, c)
		return
	}
	op.response = op.finish(nil, c)
}

// read is one operations.get, by call c: it counts towards completion.
func (op *lro) read(c *call) map[string]any {
	if !op.done {
		if op.polls--; op.polls <= 0 {
			op.complete(c)
		}
	}
	return op.json()
}

func (op *lro) json() map[string]any {
	out := map[string]any{"name": op.name}
	setField(out, "metadata", op.metadata)
	if !op.done {
		return out
	}
	out["done"] = true
	if op.err != nil {
		out["error"] = map[string]any{"code": rpcCode[op.err.status], "message": op.err.message}
	} else {
		setField(out, "response", op.response)
	}
	return out
}

// anyOf is a message's JSON as a protobuf Any: its type URL beside its
// fields, which is how protojson writes an Any.
func anyOf(typeName string, fields map[string]any) map[string]any {
	out := cloneJSON(fields)
	out["@type"] = "type.googleapis.com/" + typeName
	return out
}

// rpcCode is google.rpc.Code's numbers, which a google.rpc.Status carries.
var rpcCode = map[string]int{
	"OK": 0, "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4, "NOT_FOUND": 5,
	"ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8, "FAILED_PRECONDITION": 9,
	"ABORTED": 10, "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12, "INTERNAL": 13, "UNAVAILABLE": 14,
	"DATA_LOSS": 15, "UNAUTHENTICATED": 16,
}
