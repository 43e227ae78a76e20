package gcpfake

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tokenPath is the fake's OAuth token endpoint: a service-account key's
// token_uri points here, so the Google auth libraries' two-legged flow
// (a JWT signed with the key, exchanged for an access token) runs for
// real, against keys the fake issued.
const tokenPath = "/token"

const jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// serviceAccount is a key the fake issued.
type serviceAccount struct {
	email  string
	public *rsa.PublicKey
}

// ServiceAccountKey writes a fresh service-account key file, as the IAM
// console downloads one, into t.TempDir() and returns its path: for
// GOOGLE_APPLICATION_CREDENTIALS or option.WithAuthCredentialsFile. Its
// token_uri is the fake's /token, which accepts assertions signed with it.
func (s *Server) ServiceAccountKey(t testing.TB, project, email string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("gcpfake: %v", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("gcpfake: %v", err)
	}
	id := randomHex(20)
	file := map[string]string{
		"type":                        "service_account",
		"project_id":                  project,
		"private_key_id":              id,
		"private_key":                 string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":                email,
		"client_id":                   randomDigits(21),
		"auth_uri":                    "https://accounts.google.com/o/oauth2/auth",
		"token_uri":                   s.URL() + tokenPath,
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
		"universe_domain":             "googleapis.com",
	}
	b, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		t.Fatalf("gcpfake: %v", err)
	}
	path := filepath.Join(t.TempDir(), "sa-"+id[:8]+".json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("gcpfake: %v", err)
	}
	s.mu.Lock()
	s.keys[id] = &serviceAccount{email: email, public: &key.PublicKey}
	s.mu.Unlock()
	return path
}

// serveToken is the token endpoint. Errors take OAuth's shape
// ({"error": "invalid_grant", "error_description": …}), which the auth
// libraries report, not Google's API error shape.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method != http.MethodPost {
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "the token endpoint takes POST")
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if g := form.Get("grant_type"); g != jwtBearer {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", fmt.Sprintf("grant_type %q; the fake issues tokens for %s", g, jwtBearer))
		return
	}
	email, err := s.verifyAssertion(form.Get("assertion"))
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_grant", err.Error())
		return
	}
	tok := "ya29.gcpfake-" + randomHex(16)
	s.mu.Lock()
	s.tokens[tok] = email
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600}, false)
}

// claims are the JWT claims of a two-legged assertion.
type claims struct {
	Iss   string `json:"iss"`
	Scope string `json:"scope"`
	Aud   string `json:"aud"`
	Exp   int64  `json:"exp"`
	Iat   int64  `json:"iat"`
}

// verifyAssertion checks an RS256 JWT against the key it names and
// returns the service account's email.
func (s *Server) verifyAssertion(jwt string) (string, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return "", errors.New("assertion is not a JWT")
	}
	var head struct{ Alg, Kid string }
	if err := decodeSegment(parts[0], &head); err != nil {
		return "", fmt.Errorf("JWT header: %w", err)
	}
	s.mu.Lock()
	sa := s.keys[head.Kid]
	s.mu.Unlock()
	if head.Alg != "RS256" || sa == nil {
		return "", fmt.Errorf("JWT signed %s with key %q, not a key this fake issued", head.Alg, head.Kid)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "", fmt.Errorf("JWT signature: %w", err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(sa.public, crypto.SHA256, sum[:], sig); err != nil {
		return "", fmt.Errorf("JWT signature: %w", err)
	}
	var c claims
	if err := decodeSegment(parts[1], &c); err != nil {
		return "", fmt.Errorf("JWT claims: %w", err)
	}
	return sa.email, s.checkClaims(c, sa)
}

func (s *Server) checkClaims(c claims, sa *serviceAccount) error {
	now := s.now().Unix()
	switch {
	case c.Iss != sa.email:
		return fmt.Errorf("JWT iss %q, the key belongs to %q", c.Iss, sa.email)
	case c.Aud != s.URL()+tokenPath:
		return fmt.Errorf("JWT aud %q, want the token URI %q", c.Aud, s.URL()+tokenPath)
	case c.Scope == "":
		return errors.New("JWT has no scope")
	case c.Exp < now || c.Iat > now+int64(5*time.Minute/time.Second):
		return fmt.Errorf("JWT valid from %d to %d, now is %d", c.Iat, c.Exp, now)
	}
	return nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func oauthError(w http.ResponseWriter, code int, kind, desc string) {
	writeJSON(w, code, map[string]string{"error": kind, "error_description": desc}, false)
}

// randomDigits is a numeric id, as a service account's client_id is.
func randomDigits(n int) string {
	b := []byte(randomHex(n))
	for i, c := range b {
		b[i] = '0' + c%10
	}
	b[0] = '1'
	return string(b[:n])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
