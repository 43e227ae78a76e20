package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeGitHub speaks the part of the GitHub REST API the action calls, as
// GitHub does (pagination with Link headers, 201 on create), keeps the
// comments, and records every request so tests can assert them exactly.
type fakeGitHub struct {
	t     *testing.T
	srv   *httptest.Server
	token string

	mu       sync.Mutex
	nextID   int64
	comments map[int][]*fakeComment
	// readOnly refuses writes as GitHub does a fork's token.
	readOnly bool
	// pulls answers commits/{sha}/pulls.
	pulls map[string][]map[string]any
	// prs answers pulls/{n}; reviews pulls/{n}/reviews.
	prs     map[int]map[string]any
	reviews map[int][]any
	// perms answers collaborators/{user}/permission; GitHub answers 404
	// for a user it does not know.
	perms map[string]string
	// defaultBranch answers repos/{owner}/{repo}; main when empty.
	defaultBranch string
	requests      []fakeRequest
	// hook, when set, runs after each request is recorded, with the lock
	// held: a test's way to change GitHub between two calls of one run.
	hook func(requests int)
}

type fakeComment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	User string `json:"-"`
}

type fakeRequest struct {
	Method, Path string
	Body         string
}

func (r fakeRequest) String() string { return r.Method + " " + r.Path }

func newFakeGitHub(t *testing.T, token string) *fakeGitHub {
	g := &fakeGitHub{t: t, token: token, nextID: 1000, comments: map[int][]*fakeComment{}, pulls: map[string][]map[string]any{},
		prs: map[int]map[string]any{}, reviews: map[int][]any{}, perms: map[string]string{}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *fakeGitHub) URL() string { return g.srv.URL }

var (
	listOrCreate = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/(\d+)/comments$`)
	editComment  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/comments/(\d+)$`)
	commitPulls  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/commits/([0-9a-zA-Z]+)/pulls$`)
	pull         = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/(\d+)$`)
	pullReviews  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/(\d+)/reviews$`)
	permission   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/collaborators/([^/]+)/permission$`)
	repository   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)$`)
)

func (g *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	defer g.mu.Unlock()
	path := r.URL.Path
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	g.requests = append(g.requests, fakeRequest{Method: r.Method, Path: path, Body: string(body)})
	if g.hook != nil {
		defer g.hook(len(g.requests))
	}
	if r.Header.Get("Authorization") != "Bearer "+g.token {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if g.readOnly && r.Method != http.MethodGet {
		http.Error(w, `{"message":"Resource not accessible by integration"}`, http.StatusForbidden)
		return
	}
	switch {
	case listOrCreate.MatchString(r.URL.Path) && r.Method == http.MethodGet:
		n, _ := strconv.Atoi(listOrCreate.FindStringSubmatch(r.URL.Path)[3])
		g.page(w, r, g.commentsJSON(n))
	case listOrCreate.MatchString(r.URL.Path) && r.Method == http.MethodPost:
		n, _ := strconv.Atoi(listOrCreate.FindStringSubmatch(r.URL.Path)[3])
		var in struct{ Body string }
		if json.Unmarshal(body, &in) != nil {
			http.Error(w, `{"message":"Problems parsing JSON"}`, http.StatusBadRequest)
			return
		}
		if len(in.Body) > 65536 {
			http.Error(w, `{"message":"Validation Failed","errors":[{"field":"body","code":"custom","message":"body is too long (maximum is 65536 characters)"}]}`, http.StatusUnprocessableEntity)
			return
		}
		c := &fakeComment{ID: g.nextID, Body: in.Body, User: "github-actions[bot]"}
		g.nextID++
		g.comments[n] = append(g.comments[n], c)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(g.commentJSON(n, c))
	case editComment.MatchString(r.URL.Path) && r.Method == http.MethodPatch:
		id, _ := strconv.ParseInt(editComment.FindStringSubmatch(r.URL.Path)[3], 10, 64)
		var in struct{ Body string }
		if json.Unmarshal(body, &in) != nil || len(in.Body) > 65536 {
			http.Error(w, `{"message":"Validation Failed"}`, http.StatusUnprocessableEntity)
			return
		}
		for n, cs := range g.comments {
			for _, c := range cs {
				if c.ID == id {
					c.Body = in.Body
					_ = json.NewEncoder(w).Encode(g.commentJSON(n, c))
					return
				}
			}
		}
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	case commitPulls.MatchString(r.URL.Path) && r.Method == http.MethodGet:
		sha := commitPulls.FindStringSubmatch(r.URL.Path)[3]
		items := make([]any, 0, len(g.pulls[sha]))
		for _, p := range g.pulls[sha] {
			items = append(items, p)
		}
		g.page(w, r, items)
	case pull.MatchString(r.URL.Path) && r.Method == http.MethodGet:
		n, _ := strconv.Atoi(pull.FindStringSubmatch(r.URL.Path)[3])
		if g.prs[n] == nil {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(g.prs[n])
	case pullReviews.MatchString(r.URL.Path) && r.Method == http.MethodGet:
		n, _ := strconv.Atoi(pullReviews.FindStringSubmatch(r.URL.Path)[3])
		g.page(w, r, append([]any{}, g.reviews[n]...))
	case permission.MatchString(r.URL.Path) && r.Method == http.MethodGet:
		user := permission.FindStringSubmatch(r.URL.Path)[3]
		p, ok := g.perms[user]
		if !ok {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"permission": p, "user": map[string]any{"login": user}})
	case repository.MatchString(r.URL.Path) && r.Method == http.MethodGet:
		def := g.defaultBranch
		if def == "" {
			def = "main"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"full_name": "acme/shop", "default_branch": def})
	default:
		g.t.Errorf("the action called an API the fake does not serve: %s %s", r.Method, path)
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	}
}

// page answers one page of items, with GitHub's Link header for the next.
func (g *fakeGitHub) page(w http.ResponseWriter, r *http.Request, items []any) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page <= 0 {
		page = 1
	}
	start := min((page-1)*per, len(items))
	end := min(start+per, len(items))
	if end < len(items) {
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?page=%d&per_page=%d>; rel="next"`, g.srv.URL, r.URL.Path, page+1, per))
	}
	_ = json.NewEncoder(w).Encode(items[start:end])
}

func (g *fakeGitHub) commentsJSON(n int) []any {
	out := make([]any, 0, len(g.comments[n]))
	for _, c := range g.comments[n] {
		out = append(out, g.commentJSON(n, c))
	}
	return out
}

func (g *fakeGitHub) commentJSON(n int, c *fakeComment) map[string]any {
	kind, association := "User", "CONTRIBUTOR"
	if strings.HasSuffix(c.User, "[bot]") {
		kind, association = "Bot", "NONE"
	}
	return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.User, "type": kind}, "author_association": association,
		"html_url": fmt.Sprintf("https://github.example/acme/shop/pull/%d#issuecomment-%d", n, c.ID)}
}

// addComment puts a comment by user on pull request number.
func (g *fakeGitHub) addComment(number int, user, body string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.comments[number] = append(g.comments[number], &fakeComment{ID: g.nextID, Body: body, User: user})
	g.nextID++
}

// addComments puts n comments by people on pull request number.
func (g *fakeGitHub) addComments(number, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := 0; i < n; i++ {
		g.comments[number] = append(g.comments[number], &fakeComment{ID: g.nextID, Body: fmt.Sprintf("LGTM %d", i), User: "octocat"})
		g.nextID++
	}
}

// merged records that commit sha merged pull request number.
func (g *fakeGitHub) merged(sha string, number int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pulls[sha] = append(g.pulls[sha], map[string]any{"number": number, "state": "closed",
		"merged_at": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC3339), "merge_commit_sha": sha})
}

// pullRequest records pull request number as GitHub answers pulls/{n}:
// state is open or closed, merged whether it was; its base is main.
func (g *fakeGitHub) pullRequest(number int, state, head string, merged bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	pr := map[string]any{"number": number, "state": state, "merged": merged, "head": map[string]any{"sha": head},
		"base": map[string]any{"ref": "main"}}
	if merged {
		pr["merged_at"] = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC3339)
	}
	g.prs[number] = pr
}

// base makes pull request number one into branch.
func (g *fakeGitHub) base(number int, branch string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prs[number]["base"] = map[string]any{"ref": branch}
}

// head is the head commit of pull request number; empty when there is
// none.
func (g *fakeGitHub) head(number int) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	h, _ := g.prs[number]["head"].(map[string]any)
	sha, _ := h["sha"].(string)
	return sha
}

// review adds a review by user of commit to pull request number, after
// the others: APPROVED, CHANGES_REQUESTED, COMMENTED or DISMISSED.
func (g *fakeGitHub) review(number int, user, state, commit string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reviews[number] = append(g.reviews[number], map[string]any{"id": 5000 + len(g.reviews[number]), "user": map[string]any{"login": user}, "state": state, "commit_id": commit})
}

// take returns the requests since the last take.
func (g *fakeGitHub) take() []fakeRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.requests
	g.requests = nil
	return out
}

// bodies returns the comments on pull request number.
func (g *fakeGitHub) bodies(number int) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, c := range g.comments[number] {
		if c.User != "octocat" {
			out = append(out, c.Body)
		}
	}
	return out
}

// assertRequests compares the requests since the last take with want,
// written "METHOD /path?query".
func (g *fakeGitHub) assertRequests(t *testing.T, want ...string) []fakeRequest {
	t.Helper()
	got := g.take()
	var names []string
	for _, r := range got {
		names = append(names, r.String())
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n  %s\nwant:\n  %s", strings.Join(names, "\n  "), strings.Join(want, "\n  "))
	}
	return got
}
