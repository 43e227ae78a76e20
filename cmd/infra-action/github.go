package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/infra-iac/infra/render"
)

// repoAPI is the part of the GitHub REST API the action uses: the comments
// of one pull request, and the pull requests of one commit.
type repoAPI struct {
	c           *github.Client
	owner, repo string
}

// newRepoAPI talks to apiURL (GITHUB_API_URL: api.github.com, a GitHub
// Enterprise server's /api/v3, or a test's server) with the token.
func newRepoAPI(hc *http.Client, apiURL, token, owner, repo string) (*repoAPI, error) {
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	base, err := url.Parse(apiURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("GITHUB_API_URL %q is not a URL", apiURL)
	}
	c := github.NewClient(hc)
	if token != "" {
		c = c.WithAuthToken(token)
	}
	// Set directly: WithEnterpriseURLs would append /api/v3/ to a URL that
	// GitHub already gives whole.
	c.BaseURL = base
	c.UserAgent = "infra-action"
	return &repoAPI{c: c, owner: owner, repo: repo}, nil
}

// findComment returns the first comment of PR number whose first line is
// marker, reading every page: a marker on page three is still found, so a
// long discussion never gets a second plan comment.
func (r *repoAPI) findComment(ctx context.Context, number int, marker string) (*github.IssueComment, error) {
	found, err := r.findComments(ctx, number, marker)
	return found[marker], err
}

// findComments is findComment for several markers in one reading: by
// marker, the first trusted comment that starts with it. It stops as soon
// as every marker is found.
func (r *repoAPI) findComments(ctx context.Context, number int, markers ...string) (map[string]*github.IssueComment, error) {
	found := map[string]*github.IssueComment{}
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		cs, resp, err := r.c.Issues.ListComments(ctx, r.owner, r.repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("list the comments of #%d: %w", number, err)
		}
		for _, c := range cs {
			m := firstLine(c.GetBody())
			if _, seen := found[m]; !seen && slices.Contains(markers, m) && trusted(c) {
				found[m] = c
			}
		}
		if len(found) == len(markers) || resp.NextPage == 0 {
			return found, nil
		}
		opts.Page = resp.NextPage
	}
}

// trusted: a comment a bot wrote (the workflow's token, or an app the
// repository installed), or someone with write access. Anyone may comment
// on a public pull request, and a comment that copies the marker must
// neither be taken for the plan nor hand the apply a plan id.
func trusted(c *github.IssueComment) bool {
	if c.GetUser().GetType() == "Bot" {
		return true
	}
	switch c.GetAuthorAssociation() {
	case "OWNER", "MEMBER", "COLLABORATOR":
		return true
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// upsertComment edits the comment that starts with marker, or creates it:
// one comment per marker per pull request. An unchanged body is left
// alone, so a re-run notifies nobody. It returns the comment's URL.
func (r *repoAPI) upsertComment(ctx context.Context, number int, marker, body string) (string, error) {
	old, err := r.findComment(ctx, number, marker)
	if err != nil {
		return "", err
	}
	return r.putComment(ctx, number, old, body)
}

// firstComment is upsertComment for the plan from the cache, which the
// refreshed plan replaces at once: it leaves alone a comment already made
// for head, so that a re-run for the same commit neither edits it twice
// nor shows the cache where the refreshed plan was.
func (r *repoAPI) firstComment(ctx context.Context, number int, marker, body, head string) (string, error) {
	old, err := r.findComment(ctx, number, marker)
	if err != nil {
		return "", err
	}
	if _, was, ok := render.ReadMarkdownPlanID(old.GetBody()); ok && was == head {
		return old.GetHTMLURL(), nil
	}
	return r.putComment(ctx, number, old, body)
}

// putComment edits old to body, or creates the comment when old is nil.
func (r *repoAPI) putComment(ctx context.Context, number int, old *github.IssueComment, body string) (string, error) {
	if old != nil {
		if old.GetBody() == body {
			return old.GetHTMLURL(), nil
		}
		c, _, err := r.c.Issues.EditComment(ctx, r.owner, r.repo, old.GetID(), &github.IssueComment{Body: github.String(body)})
		if err != nil {
			return "", fmt.Errorf("edit comment %d on #%d: %w", old.GetID(), number, err)
		}
		return c.GetHTMLURL(), nil
	}
	return r.createComment(ctx, number, body)
}

// createComment adds a comment to issue or pull request number and returns
// its URL.
func (r *repoAPI) createComment(ctx context.Context, number int, body string) (string, error) {
	c, _, err := r.c.Issues.CreateComment(ctx, r.owner, r.repo, number, &github.IssueComment{Body: github.String(body)})
	if err != nil {
		return "", fmt.Errorf("comment on #%d: %w", number, err)
	}
	return c.GetHTMLURL(), nil
}

// mergedPullRequest finds the pull request whose merge made commit sha: the
// one that names sha as its merge commit, else the only merged one that
// contains it. A commit pushed without a pull request has none.
func (r *repoAPI) mergedPullRequest(ctx context.Context, sha string) (*github.PullRequest, error) {
	opts := &github.ListOptions{PerPage: 100}
	var merged []*github.PullRequest
	for {
		prs, resp, err := r.c.PullRequests.ListPullRequestsWithCommit(ctx, r.owner, r.repo, sha, opts)
		if err != nil {
			return nil, fmt.Errorf("list the pull requests of commit %s: %w", sha, err)
		}
		for _, pr := range prs {
			if pr.GetMergeCommitSHA() == sha && pr.MergedAt != nil {
				return pr, nil
			}
			if pr.MergedAt != nil {
				merged = append(merged, pr)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(merged) == 1 {
		return merged[0], nil
	}
	return nil, nil
}

// pullRequest reads pull request number as GitHub has it now: its state
// and its head commit.
func (r *repoAPI) pullRequest(ctx context.Context, number int) (*github.PullRequest, error) {
	pr, _, err := r.c.PullRequests.Get(ctx, r.owner, r.repo, number)
	if err != nil {
		return nil, fmt.Errorf("read pull request #%d: %w", number, err)
	}
	return pr, nil
}

// defaultBranch is the repository's default branch, as GitHub has it.
func (r *repoAPI) defaultBranch(ctx context.Context) (string, error) {
	repo, _, err := r.c.Repositories.Get(ctx, r.owner, r.repo)
	if err != nil {
		return "", fmt.Errorf("read the repository %s/%s: %w", r.owner, r.repo, err)
	}
	if repo.GetDefaultBranch() == "" {
		return "", fmt.Errorf("GitHub names no default branch of %s/%s", r.owner, r.repo)
	}
	return repo.GetDefaultBranch(), nil
}

// permission is user's permission on the repository: admin, write (which
// maintain reads as), read or none. A user GitHub does not know as a
// collaborator (404) has none.
func (r *repoAPI) permission(ctx context.Context, user string) (string, error) {
	// Escaped: the login comes from the event.
	p, resp, err := r.c.Repositories.GetPermissionLevel(ctx, r.owner, r.repo, url.PathEscape(user))
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return "none", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the permission of %s on %s/%s: %w", user, r.owner, r.repo, err)
	}
	return p.GetPermission(), nil
}

// reviews lists every review of pull request number, oldest first,
// reading every page.
func (r *repoAPI) reviews(ctx context.Context, number int) ([]*github.PullRequestReview, error) {
	opts := &github.ListOptions{PerPage: 100}
	var all []*github.PullRequestReview
	for {
		rs, resp, err := r.c.PullRequests.ListReviews(ctx, r.owner, r.repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("list the reviews of #%d: %w", number, err)
		}
		all = append(all, rs...)
		if resp.NextPage == 0 {
			return all, nil
		}
		opts.Page = resp.NextPage
	}
}
