package webapptest

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/textproto"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Client is a browser without JavaScript for an app of the kit (the dashboard, the console): a
// cookie jar and no redirect followed, so that every answer is seen as it is. What differs
// between the apps is a path: where the app lives (its login form is Prefix+"login/") and the
// page a form's CSRF token is read from.
type Client struct {
	Base string
	HTTP *http.Client
}

// Answer is one answer of an app.
type Answer struct {
	Status int
	Header http.Header
	Body   string
}

// NewClient is a client of the server at base (scheme and host).
func NewClient(t testing.TB, base string) *Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Client{Base: base, HTTP: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Do sends a request; form, when not nil, is sent url-encoded. headers alternate name, value.
func (c *Client) Do(t testing.TB, method, path string, form url.Values, headers ...string) Answer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.Base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return c.Send(t, req, headers...)
}

// Send sends a request built by the caller, with headers (name, value, …), and reads the answer.
func (c *Client) Send(t testing.TB, req *http.Request, headers ...string) Answer {
	t.Helper()
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: string(raw)}
}

// Get reads a page.
func (c *Client) Get(t testing.TB, path string, headers ...string) Answer {
	t.Helper()
	return c.Do(t, http.MethodGet, path, nil, headers...)
}

// Login fills the login form of the app at prefix ("/dashboard/") as a browser would and
// returns the answer to the POST.
func (c *Client) Login(t testing.TB, prefix, email, password string) Answer {
	t.Helper()
	page := c.Get(t, prefix+"login/")
	if page.Status != http.StatusOK {
		t.Fatalf("%slogin/: %d %s", prefix, page.Status, page.Body)
	}
	return c.Do(t, http.MethodPost, prefix+"login/", url.Values{
		"csrf_token": {HiddenField(t, page.Body, "csrf_token")}, "email": {email}, "password": {password}, "next": {prefix},
	})
}

// CSRF is the session's token, read from the page at path as a form would.
func (c *Client) CSRF(t testing.TB, path string) string {
	t.Helper()
	page := c.Get(t, path)
	if page.Status != http.StatusOK {
		t.Fatalf("%s: %d %s", path, page.Status, page.Body)
	}
	return HiddenField(t, page.Body, "csrf_token")
}

// Upload posts a multipart form: fields (name, value) and one file field "file".
func (c *Client) Upload(t testing.TB, path string, fields [][2]string, filename string, content []byte, headers ...string) Answer {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, filename))
	h.Set("Content-Type", "application/octet-stream")
	part, err := mw.CreatePart(h)
	if err == nil {
		_, err = part.Write(content)
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, c.Base+path, &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.Send(t, req, headers...)
}

// Cookie is the value of the client's cookie name for the app at path ("" when it has none).
func (c *Client) Cookie(t testing.TB, path, name string) string {
	t.Helper()
	u, err := url.Parse(c.Base + path)
	if err != nil {
		t.Fatal(err)
	}
	for _, ck := range c.HTTP.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

var hiddenFieldPattern = regexp.MustCompile(`name="([a-z_]+)" value="([^"]*)"`)

// HiddenField is the value of the form field name in a page (the first one), as a browser would
// send it; the test fails when the page has none.
func HiddenField(t testing.TB, body, name string) string {
	t.Helper()
	for _, m := range hiddenFieldPattern.FindAllStringSubmatch(body, -1) {
		if m[1] == name {
			return m[2]
		}
	}
	t.Fatalf("no field %s in the page", name)
	return ""
}
