package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/filestore"
)

// kycServer is a test server whose KYC files go to a directory of the test.
func kycServer(t *testing.T) (*testServer, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "files")
	ts := newTestServer(t, func(c *Config) {
		files, err := filestore.NewDir(dir)
		require.NoError(t, err)
		c.Files = files
	})
	return ts, dir
}

// Sample files, made of real bytes of each format.

func kycPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

func kycJPEG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(1, 1, color.RGBA{B: 200, A: 255})
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, img, nil))
	return buf.Bytes()
}

// kycPDF is a minimal valid one-page PDF, with its cross-reference table.
func kycPDF() []byte {
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >>",
	}
	var buf bytes.Buffer
	buf.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = buf.Len()
		fmt.Fprintf(&buf, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := buf.Len()
	fmt.Fprintf(&buf, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&buf, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return buf.Bytes()
}

// kycWebP is a 1×1 lossless WebP: the RIFF header, WEBP, and one VP8L chunk.
func kycWebP() []byte {
	vp8l := []byte{0x2f, 0x00, 0x00, 0x00, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07}
	chunk := binary.LittleEndian.AppendUint32([]byte("VP8L"), uint32(len(vp8l)))
	chunk = append(append(chunk, vp8l...), 0) // chunks are padded to an even size
	out := binary.LittleEndian.AppendUint32([]byte("RIFF"), uint32(4+len(chunk)))
	return append(append(out, "WEBP"...), chunk...)
}

// kycEXE is the start of a Windows executable (an MZ header and its DOS stub).
func kycEXE() []byte {
	exe := append([]byte{'M', 'Z', 0x90, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff}, make([]byte, 50)...)
	return append(exe, "This program cannot be run in DOS mode.\r\r\n$"...)
}

// multipartFile builds a multipart/form-data body with a text field and one file part.
func multipartFile(t *testing.T, field, filename, declaredType string, content []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	require.NoError(t, mw.WriteField("note", "ignored"))
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, field, filename))
	h.Set("Content-Type", declaredType)
	part, err := mw.CreatePart(h)
	require.NoError(t, err)
	_, err = part.Write(content)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	return buf.Bytes(), mw.FormDataContentType()
}

func (ts *testServer) uploadKYC(t *testing.T, headers []string, filename, declaredType string, content []byte) *response {
	t.Helper()
	body, ct := multipartFile(t, "file", filename, declaredType, content)
	return ts.call(t, "POST", "/api/v1/merchant-kyc/upload/", body, append(headers, "Content-Type", ct)...)
}

// uploadedKYC uploads a file and returns its URL.
func (ts *testServer) uploadedKYC(t *testing.T, headers []string, content []byte) string {
	t.Helper()
	r := ts.uploadKYC(t, headers, "doc.png", "image/png", content)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var up kycFileUpload
	r.data(t, &up)
	return up.URL
}

func (ts *testServer) submitKYC(t *testing.T, headers []string, body map[string]any) sika.KYCDossier {
	t.Helper()
	if _, ok := body["merchant"]; !ok {
		body["merchant"] = uuid.NewString()
	}
	r := ts.call(t, "POST", "/api/v1/merchant-kyc/", body, headers...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var d sika.KYCDossier
	r.data(t, &d)
	return d
}

func (ts *testServer) attachKYC(t *testing.T, headers []string, dossier uuid.UUID, body map[string]string) *response {
	t.Helper()
	return ts.call(t, "POST", "/api/v1/merchant-kyc/"+dossier.String()+"/documents/", body, headers...)
}

func merchantNow(t *testing.T, id uuid.UUID) sika.Merchant {
	t.Helper()
	m, err := testStore.MerchantByID(context.Background(), id)
	require.NoError(t, err)
	return m
}

func TestKYCDossierSubmitListAndDetail(t *testing.T) {
	ts, _ := kycServer(t)
	acct := ts.newAccount(t, true) // VERIFIED and active: a re-review must not close the API
	other := ts.newAccount(t, false)
	dash := acct.dashboard(sika.EnvironmentLive)

	first := ts.submitKYC(t, dash, map[string]any{"merchant": other.Merchant.ID.String(), "kyc_type": "individual",
		"first_name": " Ada ", "last_name": "Lovelace", "date_of_birth": "1990-12-10", "id_document_type": "CNI"})
	assert.Equal(t, acct.Merchant.ID, first.Merchant, "merchant is forced to the caller's own")
	assert.Equal(t, sika.KYCIndividual, first.KYCType)
	assert.Equal(t, sika.KYCDossierPending, first.Status)
	assert.Equal(t, "Ada", first.FirstName)
	require.NotNil(t, first.DateOfBirth)
	assert.Equal(t, "1990-12-10", *first.DateOfBirth)
	assert.Empty(t, first.Documents)
	assert.Nil(t, first.ReviewedAt)
	assert.Nil(t, first.ReviewedByAdmin)
	m := merchantNow(t, acct.Merchant.ID)
	assert.Equal(t, sika.KYCPending, m.KYCStatus, "a new dossier puts the merchant back to PENDING")
	assert.True(t, m.IsActive, "is_active is not affected")
	assert.Equal(t, 200, ts.call(t, "GET", "/api/v1/networks/", nil, acct.key(sika.EnvironmentLive, sika.ScopeBoth)...).Status,
		"API access stays open during a re-review")

	// No cross-validation: a BUSINESS dossier without company fields is accepted.
	second := ts.submitKYC(t, dash, map[string]any{"merchant": acct.Merchant.ID.String(), "kyc_type": "BUSINESS", "date_of_birth": nil})
	assert.Nil(t, second.DateOfBirth)
	assert.Equal(t, "", second.CompanyName)

	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"merchant": acct.Merchant.ID.String()}, "kyc_type"},
		{map[string]any{"merchant": acct.Merchant.ID.String(), "kyc_type": "COMPANY"}, "kyc_type"},
		{map[string]any{"kyc_type": "BUSINESS"}, "merchant"},
		{map[string]any{"merchant": "me", "kyc_type": "BUSINESS"}, "merchant"},
		{map[string]any{"merchant": acct.Merchant.ID.String(), "kyc_type": "BUSINESS", "date_of_birth": "10/12/1990"}, "date_of_birth"},
		{map[string]any{"merchant": acct.Merchant.ID.String(), "kyc_type": "BUSINESS", "date_of_birth": "1990-02-30"}, "date_of_birth"},
		{map[string]any{"merchant": acct.Merchant.ID.String(), "kyc_type": "BUSINESS", "date_of_birth": "2999-01-01"}, "date_of_birth"},
		{map[string]any{"merchant": acct.Merchant.ID.String(), "kyc_type": "BUSINESS", "company_name": strings.Repeat("x", 201)}, "company_name"},
		{map[string]any{"merchant": acct.Merchant.ID.String(), "kyc_type": 1}, "kyc_type"},
	} {
		r := ts.call(t, "POST", "/api/v1/merchant-kyc/", c.body, dash...)
		assert.Equal(t, 400, r.Status, "%v: %s", c.body, r.Body)
		assert.Contains(t, r.fields(), c.field, "%v", c.body)
	}

	// Reads accept an API key, in either environment: a dossier is the merchant's, not an environment's.
	for _, key := range [][]string{acct.key(sika.EnvironmentTest, sika.ScopePayin), acct.key(sika.EnvironmentLive, sika.ScopePayout)} {
		var list struct {
			Count   int
			Results []sika.KYCDossier
		}
		ts.call(t, "GET", "/api/v1/merchant-kyc/", nil, key...).data(t, &list)
		require.Equal(t, 2, list.Count)
		assert.Equal(t, []uuid.UUID{second.ID, first.ID}, []uuid.UUID{list.Results[0].ID, list.Results[1].ID}, "newest first")
		var got sika.KYCDossier
		ts.call(t, "GET", "/api/v1/merchant-kyc/"+first.ID.String()+"/", nil, key...).data(t, &got)
		assert.Equal(t, first.ID, got.ID)
	}
	var page struct {
		Count   int
		Next    *string
		Results []sika.KYCDossier
	}
	ts.call(t, "GET", "/api/v1/merchant-kyc/?page_size=1", nil, dash...).data(t, &page)
	assert.Equal(t, 2, page.Count)
	assert.Len(t, page.Results, 1)
	assert.NotNil(t, page.Next)

	// Another merchant sees none of them.
	otherKey := other.key(sika.EnvironmentTest, sika.ScopeBoth)
	r := ts.call(t, "GET", "/api/v1/merchant-kyc/"+first.ID.String()+"/", nil, otherKey...)
	assert.Equal(t, 404, r.Status)
	assert.Equal(t, "not_found", r.code())
	var none struct{ Count int }
	ts.call(t, "GET", "/api/v1/merchant-kyc/", nil, otherKey...).data(t, &none)
	assert.Zero(t, none.Count)
	assert.Equal(t, 404, ts.call(t, "GET", "/api/v1/merchant-kyc/not-a-uuid/", nil, dash...).Status)

	// No PATCH or DELETE on a dossier.
	for _, method := range []string{"PATCH", "DELETE", "PUT"} {
		r := ts.call(t, method, "/api/v1/merchant-kyc/"+first.ID.String()+"/", map[string]string{"kyc_type": "BUSINESS"}, dash...)
		assert.Equal(t, 405, r.Status, method)
		assert.Equal(t, "method_not_allowed", r.code())
		assert.Equal(t, "GET", r.Header.Get("Allow"), "a 405 names what the path takes")
	}
	assert.Equal(t, "GET, POST", ts.call(t, "DELETE", "/api/v1/merchant-kyc/", nil, dash...).Header.Get("Allow"))
}

func TestKYCWritesAreDashboardOnly(t *testing.T) {
	ts, _ := kycServer(t)
	acct := ts.newAccount(t, true)
	dossier := ts.submitKYC(t, acct.dashboard(sika.EnvironmentTest), map[string]any{"kyc_type": "INDIVIDUAL"})
	url := ts.uploadedKYC(t, acct.dashboard(sika.EnvironmentTest), kycPNG(t))
	body, ct := multipartFile(t, "file", "id.png", "image/png", kycPNG(t))
	for _, key := range [][]string{acct.key(sika.EnvironmentTest, sika.ScopeBoth), acct.key(sika.EnvironmentLive, sika.ScopeBoth)} {
		for _, c := range []struct {
			name, path string
			body       any
			headers    []string
		}{
			{"submit", "/api/v1/merchant-kyc/", map[string]string{"merchant": acct.Merchant.ID.String(), "kyc_type": "INDIVIDUAL"}, key},
			{"upload", "/api/v1/merchant-kyc/upload/", body, append(append([]string{}, key...), "Content-Type", ct)},
			{"attach", "/api/v1/merchant-kyc/" + dossier.ID.String() + "/documents/", map[string]string{"document_type": "ID_CARD", "file_url": url}, key},
		} {
			r := ts.call(t, "POST", c.path, c.body, c.headers...)
			assert.Equal(t, 403, r.Status, "%s: %s", c.name, r.Body)
			assert.Equal(t, "dashboard_only", r.code(), c.name)
		}
	}
	var list struct{ Count int }
	ts.call(t, "GET", "/api/v1/merchant-kyc/", nil, acct.key(sika.EnvironmentTest, sika.ScopeBoth)...).data(t, &list)
	assert.Equal(t, 1, list.Count, "no write went through")
}

func TestKYCUploadTypesAreReadFromTheBytes(t *testing.T) {
	ts, dir := kycServer(t)
	acct := ts.newAccount(t, false)
	dash := acct.dashboard(sika.EnvironmentTest)
	for _, c := range []struct {
		name, filename, declared, want, ext string
		content                             []byte
	}{
		{"png", "id.png", "image/png", "image/png", "png", kycPNG(t)},
		{"jpeg", "selfie.jpg", "image/jpeg", "image/jpeg", "jpg", kycJPEG(t)},
		{"webp", "scan.webp", "image/webp", "image/webp", "webp", kycWebP()},
		{"pdf", "rccm.pdf", "application/pdf", "application/pdf", "pdf", kycPDF()},
		{"pdf declared as anything", "rccm", "application/octet-stream", "application/pdf", "pdf", kycPDF()},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ts.uploadKYC(t, dash, c.filename, c.declared, c.content)
			require.Equal(t, 201, r.Status, "%s", r.Body)
			var up kycFileUpload
			r.data(t, &up)
			assert.Equal(t, c.want, up.ContentType)
			assert.Equal(t, int64(len(c.content)), up.Size)
			assert.Regexp(t, `^`+ts.url+`/api/v1/merchant-kyc/files/[0-9a-f]{64}\.`+c.ext+`$`, up.URL)
			got := ts.call(t, "GET", up.URL, nil, dash...)
			require.Equal(t, 200, got.Status, "%s", got.Body)
			assert.Equal(t, c.content, got.Body)
			assert.Equal(t, c.want, got.Header.Get("Content-Type"))
			assert.Equal(t, "nosniff", got.Header.Get("X-Content-Type-Options"))
		})
	}

	for _, c := range []struct {
		name, filename, declared string
		content                  []byte
	}{
		{"exe renamed png", "passport.png", "image/png", kycEXE()},
		{"text", "id.pdf", "application/pdf", []byte("just some text, not a PDF")},
		{"gif", "id.gif", "image/gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")},
		{"riff but not webp", "x.webp", "image/webp", append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), make([]byte, 32)...)},
	} {
		r := ts.uploadKYC(t, dash, c.filename, c.declared, c.content)
		assert.Equal(t, 415, r.Status, "%s: %s", c.name, r.Body)
		assert.Equal(t, "unsupported_media_type", r.code(), c.name)
	}

	// Content-addressed: the same bytes uploaded twice are stored once, under the same URL.
	pdf := kycPDF()
	first, again := ts.uploadedKYC(t, dash, pdf), ts.uploadedKYC(t, dash, pdf)
	assert.Equal(t, first, again)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
		info, err := e.Info()
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), e.Name())
	}
	assert.Len(t, names, 4, "png, jpeg, webp and one pdf; no temporary file left: %v", names)
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())

	// Malformed uploads are validation errors on `file`.
	noFile, ct := multipartFile(t, "document", "id.png", "image/png", kycPNG(t))
	empty, emptyCT := multipartFile(t, "file", "id.png", "image/png", nil)
	for name, r := range map[string]*response{
		"no file field": ts.call(t, "POST", "/api/v1/merchant-kyc/upload/", noFile, append(dash, "Content-Type", ct)...),
		"empty file":    ts.call(t, "POST", "/api/v1/merchant-kyc/upload/", empty, append(dash, "Content-Type", emptyCT)...),
		"json body":     ts.call(t, "POST", "/api/v1/merchant-kyc/upload/", map[string]string{"file": "x"}, dash...),
	} {
		assert.Equal(t, 400, r.Status, "%s: %s", name, r.Body)
		assert.Contains(t, r.fields(), "file", name)
	}
}

// countingReader yields a multipart body whose file part is size bytes (a PNG signature, then
// zeros) without holding it, and counts what was read of it.
type countingReader struct {
	r    io.Reader
	read atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read.Add(int64(n))
	return n, err
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func largeUpload(size int64) (*countingReader, int64, string) {
	boundary := "kycboundary0123456789"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.png\"\r\n" +
		"Content-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n"
	tail := "\r\n--" + boundary + "--\r\n"
	body := io.MultiReader(strings.NewReader(head), io.LimitReader(zeros{}, size-8), strings.NewReader(tail))
	return &countingReader{r: body}, int64(len(head)) + size - 8 + int64(len(tail)), "multipart/form-data; boundary=" + boundary
}

// rawUpload sends a request over its own connection and reads the answer as soon as it comes,
// while the body is still being written (a client that stops writing when the server answers).
func rawUpload(t *testing.T, ts *testServer, headers []string, body *countingReader, length int64, contentType string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	req, err := http.NewRequest("POST", ts.url+"/api/v1/merchant-kyc/upload/", nil)
	require.NoError(t, err)
	var head bytes.Buffer
	fmt.Fprintf(&head, "POST /api/v1/merchant-kyc/upload/ HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\n", req.Host, contentType)
	if length >= 0 {
		fmt.Fprintf(&head, "Content-Length: %d\r\n", length)
	} else {
		head.WriteString("Transfer-Encoding: chunked\r\n")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(&head, "%s: %s\r\n", headers[i], headers[i+1])
		req.Header.Set(headers[i], headers[i+1])
	}
	head.WriteString("\r\n")
	_, err = conn.Write(head.Bytes())
	require.NoError(t, err)
	written := make(chan struct{})
	go func() {
		defer close(written)
		var w io.Writer = conn
		if length < 0 {
			cw := newChunkedWriter(conn)
			defer cw.Close()
			w = cw
		}
		_, _ = io.Copy(w, body) // stops when the server closes the connection
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	ts.validator.check(t, req, resp.StatusCode, resp.Header, raw)
	conn.Close()
	<-written
	return resp, raw
}

// chunkedWriter writes HTTP/1.1 chunks.
type chunkedWriter struct{ w io.Writer }

func newChunkedWriter(w io.Writer) *chunkedWriter { return &chunkedWriter{w} }

func (c *chunkedWriter) Write(p []byte) (int, error) {
	if _, err := fmt.Fprintf(c.w, "%x\r\n", len(p)); err != nil {
		return 0, err
	}
	if _, err := c.w.Write(p); err != nil {
		return 0, err
	}
	_, err := io.WriteString(c.w, "\r\n")
	return len(p), err
}

func (c *chunkedWriter) Close() error { _, err := io.WriteString(c.w, "0\r\n\r\n"); return err }

func TestKYCUploadSizeLimit(t *testing.T) {
	ts, dir := kycServer(t)
	acct := ts.newAccount(t, false)
	dash := acct.dashboard(sika.EnvironmentTest)
	png := kycPNG(t)
	pad := func(n int) []byte { return append(append([]byte{}, png...), make([]byte, n-len(png))...) }

	// 10 MB exactly is accepted; one byte more is not.
	r := ts.uploadKYC(t, dash, "big.png", "image/png", pad(sika.MaxKYCFileSize))
	require.Equal(t, 201, r.Status, "%s", r.Body)
	r = ts.uploadKYC(t, dash, "big.png", "image/png", pad(sika.MaxKYCFileSize+1))
	assert.Equal(t, 413, r.Status, "%s", r.Body)
	assert.Equal(t, "file_too_large", r.code())

	const eleven = 11_000_000
	t.Run("declared length", func(t *testing.T) {
		body, length, ct := largeUpload(eleven)
		resp, raw := rawUpload(t, ts, dash, body, length, ct)
		assert.Equal(t, 413, resp.StatusCode, "%s", raw)
		assert.Contains(t, string(raw), "file_too_large")
		assert.Less(t, body.read.Load(), length, "the server answered before the body was sent")
		t.Logf("sent %d of %d bytes before the answer", body.read.Load(), length)
	})
	t.Run("streamed without a length", func(t *testing.T) {
		body, length, ct := largeUpload(eleven)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		resp, raw := rawUpload(t, ts, dash, body, -1, ct)
		runtime.ReadMemStats(&after)
		t.Logf("allocated %d bytes while %d were sent", after.TotalAlloc-before.TotalAlloc, body.read.Load())
		assert.Equal(t, 413, resp.StatusCode, "%s", raw)
		assert.Contains(t, string(raw), "file_too_large")
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20),
			"the %d-byte body went through without being held in memory", length)
	})
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only the 10 MB file; nothing left of the refused ones")
}

func TestKYCFilesAreServedToTheirMerchantAndStaffOnly(t *testing.T) {
	ts, _ := kycServer(t)
	acct := ts.newAccount(t, false)
	other := ts.newAccount(t, true)
	jpg := kycJPEG(t)
	url := ts.uploadedKYC(t, acct.dashboard(sika.EnvironmentTest), jpg)

	for name, headers := range map[string][]string{
		"owner TEST key":          acct.key(sika.EnvironmentTest, sika.ScopePayin),
		"owner dashboard in LIVE": acct.dashboard(sika.EnvironmentLive),
		"staff":                   ts.staff(t),
	} {
		r := ts.call(t, "GET", url, nil, headers...)
		require.Equal(t, 200, r.Status, "%s: %s", name, r.Body)
		assert.Equal(t, jpg, r.Body, name)
		assert.Equal(t, "image/jpeg", r.Header.Get("Content-Type"), name)
		assert.Equal(t, "private, no-store", r.Header.Get("Cache-Control"), name)
	}
	for name, c := range map[string]struct {
		url     string
		headers []string
	}{
		"another merchant's key":       {url, other.key(sika.EnvironmentTest, sika.ScopeBoth)},
		"another merchant's dashboard": {url, other.dashboard(sika.EnvironmentTest)},
		"wrong extension":              {strings.TrimSuffix(url, ".jpg") + ".png", acct.dashboard(sika.EnvironmentTest)},
		"unknown file":                 {ts.url + "/api/v1/merchant-kyc/files/" + strings.Repeat("ab", 32) + ".png", ts.staff(t)},
		"not a digest":                 {ts.url + "/api/v1/merchant-kyc/files/" + strings.Repeat("z", 64) + ".png", acct.dashboard(sika.EnvironmentTest)},
	} {
		r := ts.call(t, "GET", c.url, nil, c.headers...)
		assert.Equal(t, 404, r.Status, "%s: %s", name, r.Body)
	}
	r := ts.call(t, "GET", url, nil)
	assert.Equal(t, 401, r.Status)
	assert.Equal(t, "authentication_required", r.code())
	r = ts.call(t, "GET", url, nil, acct.key(sika.EnvironmentLive, sika.ScopeBoth)...)
	assert.Equal(t, 403, r.Status, "an inactive merchant's LIVE key")
	assert.Equal(t, "merchant_inactive", r.code())
}

func TestKYCDocuments(t *testing.T) {
	ts, _ := kycServer(t)
	acct := ts.newAccount(t, false)
	other := ts.newAccount(t, false)
	dash, otherDash := acct.dashboard(sika.EnvironmentTest), other.dashboard(sika.EnvironmentTest)
	dossier := ts.submitKYC(t, dash, map[string]any{"kyc_type": "BUSINESS", "company_name": "Shop SARL"})
	otherDossier := ts.submitKYC(t, otherDash, map[string]any{"kyc_type": "INDIVIDUAL"})
	url := ts.uploadedKYC(t, dash, kycPDF())
	otherURL := ts.uploadedKYC(t, otherDash, kycJPEG(t))

	r := ts.attachKYC(t, dash, dossier.ID, map[string]string{"document_type": "business_registration", "label": "RCCM", "file_url": url})
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var doc sika.KYCDocument
	r.data(t, &doc)
	assert.Equal(t, dossier.ID, doc.Dossier)
	assert.Equal(t, sika.KYCDocumentBusinessRegistration, doc.DocumentType)
	assert.Equal(t, "RCCM", doc.Label)
	assert.Equal(t, url, doc.FileURL)
	for _, typ := range sika.KYCDocumentTypes {
		r := ts.attachKYC(t, dash, dossier.ID, map[string]string{"document_type": string(typ), "file_url": url})
		assert.Equal(t, 201, r.Status, "%s: %s", typ, r.Body)
	}

	for _, c := range []struct {
		body  map[string]string
		field string
	}{
		{map[string]string{"file_url": url}, "document_type"},
		{map[string]string{"document_type": "DRIVING_LICENCE", "file_url": url}, "document_type"},
		{map[string]string{"document_type": "OTHER"}, "file_url"},
		{map[string]string{"document_type": "OTHER", "file_url": otherURL}, "file_url"},
		{map[string]string{"document_type": "OTHER", "file_url": "https://evil.example/x.pdf"}, "file_url"},
		{map[string]string{"document_type": "OTHER", "file_url": strings.Replace(url, ".pdf", ".png", 1)}, "file_url"},
		{map[string]string{"document_type": "OTHER", "file_url": strings.Replace(url, ts.url, "https://evil.example", 1)}, "file_url"},
		{map[string]string{"document_type": "OTHER", "label": strings.Repeat("l", 201), "file_url": url}, "label"},
	} {
		r := ts.attachKYC(t, dash, dossier.ID, c.body)
		assert.Equal(t, 400, r.Status, "%v: %s", c.body, r.Body)
		assert.Contains(t, r.fields(), c.field, "%v", c.body)
	}

	// Another merchant's dossier: POST is 404, GET is 200 with an empty list (spec).
	r = ts.attachKYC(t, dash, otherDossier.ID, map[string]string{"document_type": "OTHER", "file_url": url})
	assert.Equal(t, 404, r.Status, "%s", r.Body)
	assert.Equal(t, "not_found", r.code())
	r = ts.attachKYC(t, dash, uuid.New(), map[string]string{"document_type": "OTHER", "file_url": url})
	assert.Equal(t, 404, r.Status)
	for _, headers := range [][]string{otherDash, other.key(sika.EnvironmentTest, sika.ScopeBoth)} {
		var docs []sika.KYCDocument
		r := ts.call(t, "GET", "/api/v1/merchant-kyc/"+dossier.ID.String()+"/documents/", nil, headers...)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		r.data(t, &docs)
		assert.Empty(t, docs)
	}

	var docs []sika.KYCDocument
	ts.call(t, "GET", "/api/v1/merchant-kyc/"+dossier.ID.String()+"/documents/", nil, acct.key(sika.EnvironmentTest, sika.ScopeBoth)...).data(t, &docs)
	require.Len(t, docs, 1+len(sika.KYCDocumentTypes))
	assert.Equal(t, doc.ID, docs[0].ID, "oldest first")
	var got sika.KYCDossier
	ts.call(t, "GET", "/api/v1/merchant-kyc/"+dossier.ID.String()+"/", nil, dash...).data(t, &got)
	assert.Equal(t, docs, got.Documents, "the dossier embeds its documents")
	assert.True(t, got.UpdatedAt.After(got.CreatedAt))

	// A reviewed dossier takes no more documents.
	ts.reviewKYC(t, ts.staff(t), dossier.ID, sika.KYCDossierRejected, "Blurry.")
	r = ts.attachKYC(t, dash, dossier.ID, map[string]string{"document_type": "OTHER", "file_url": url})
	assert.Equal(t, 409, r.Status, "%s", r.Body)
	assert.Equal(t, "not_pending", r.code())
}

func TestKYCTwoMerchantsOfOneAccountHaveSeparateDossiers(t *testing.T) {
	ts, _ := kycServer(t)
	acct := ts.newAccount(t, false)
	r := ts.call(t, "POST", "/api/v1/auth/merchants/", map[string]string{"business_name": "Second shop", "country": "CI"}, bearer(acct.Token)...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var second sika.MerchantMembership
	r.data(t, &second)
	firstDash := acct.dashboard(sika.EnvironmentTest)
	secondDash := append(acct.dashboard(sika.EnvironmentTest), "X-Merchant-Id", second.ID.String())

	d1 := ts.submitKYC(t, firstDash, map[string]any{"kyc_type": "INDIVIDUAL", "merchant": second.ID.String()})
	d2 := ts.submitKYC(t, secondDash, map[string]any{"kyc_type": "BUSINESS", "merchant": acct.Merchant.ID.String()})
	assert.Equal(t, acct.Merchant.ID, d1.Merchant, "the acting merchant, not the body's")
	assert.Equal(t, second.ID, d2.Merchant)

	for _, c := range []struct {
		headers []string
		want    uuid.UUID
	}{{firstDash, d1.ID}, {secondDash, d2.ID}} {
		var list struct {
			Count   int
			Results []sika.KYCDossier
		}
		ts.call(t, "GET", "/api/v1/merchant-kyc/", nil, c.headers...).data(t, &list)
		require.Equal(t, 1, list.Count)
		assert.Equal(t, c.want, list.Results[0].ID)
	}
	assert.Equal(t, 404, ts.call(t, "GET", "/api/v1/merchant-kyc/"+d2.ID.String()+"/", nil, firstDash...).Status)

	// A file uploaded for the first merchant belongs to it only.
	url := ts.uploadedKYC(t, firstDash, kycPNG(t))
	r = ts.attachKYC(t, secondDash, d2.ID, map[string]string{"document_type": "ID_CARD", "file_url": url})
	assert.Equal(t, 400, r.Status, "%s", r.Body)
	assert.Contains(t, r.fields(), "file_url")
	assert.Equal(t, 404, ts.call(t, "GET", url, nil, secondDash...).Status)
	assert.Equal(t, 404, ts.attachKYC(t, secondDash, d1.ID, map[string]string{"document_type": "ID_CARD", "file_url": url}).Status)
	assert.Equal(t, 201, ts.attachKYC(t, firstDash, d1.ID, map[string]string{"document_type": "ID_CARD", "file_url": url}).Status)
	assert.Equal(t, sika.KYCPending, merchantNow(t, second.ID).KYCStatus)
}

// kycEvents returns the data of a merchant's events of a type, by environment.
func kycEvents(t *testing.T, merchant uuid.UUID, typ sika.EventType) map[sika.Environment]sika.KYCDossier {
	t.Helper()
	rows, err := testStore.Pool().Query(context.Background(), `SELECT environment, payload FROM events
		WHERE merchant_id = $1 AND type = $2`, merchant, typ)
	require.NoError(t, err)
	defer rows.Close()
	out := map[sika.Environment]sika.KYCDossier{}
	for rows.Next() {
		var env sika.Environment
		var payload []byte
		require.NoError(t, rows.Scan(&env, &payload))
		var ev struct {
			Type        sika.EventType
			Environment sika.Environment
			Data        sika.KYCDossier
		}
		require.NoError(t, json.Unmarshal(payload, &ev))
		assert.Equal(t, typ, ev.Type)
		assert.Equal(t, env, ev.Environment)
		_, dup := out[env]
		assert.False(t, dup, "one %s event per environment", typ)
		out[env] = ev.Data
	}
	require.NoError(t, rows.Err())
	return out
}

// reviewKYC approves or rejects a dossier as staff and checks the review is stamped.
func (ts *testServer) reviewKYC(t *testing.T, staff []string, dossier uuid.UUID, decision sika.KYCDossierStatus, note string) sika.KYCDossier {
	t.Helper()
	action := map[sika.KYCDossierStatus]string{sika.KYCDossierApproved: "approve", sika.KYCDossierRejected: "reject"}[decision]
	r := ts.call(t, "POST", "/api/v1/admin/merchant-kyc/"+dossier.String()+"/"+action+"/", map[string]string{"review_note": note}, staff...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	var d sika.KYCDossier
	r.data(t, &d)
	assert.Equal(t, decision, d.Status)
	assert.Equal(t, note, d.ReviewNote)
	require.NotNil(t, d.ReviewedAt)
	require.NotNil(t, d.ReviewedByAdmin)
	admin, err := testStore.MemberByID(context.Background(), *d.ReviewedByAdmin)
	require.NoError(t, err)
	assert.True(t, admin.IsStaff, "reviewed_by_admin is the staff member")
	return d
}

func TestKYCReview(t *testing.T) {
	ts, _ := kycServer(t)
	acct := ts.newAccount(t, false)
	dash := acct.dashboard(sika.EnvironmentTest)
	staff := ts.staff(t)
	dossier := ts.submitKYC(t, dash, map[string]any{"kyc_type": "INDIVIDUAL", "first_name": "Ada"})
	url := ts.uploadedKYC(t, dash, kycPNG(t))
	require.Equal(t, 201, ts.attachKYC(t, dash, dossier.ID, map[string]string{"document_type": "ID_CARD", "file_url": url}).Status)
	approve := "/api/v1/admin/merchant-kyc/" + dossier.ID.String() + "/approve/"

	for name, headers := range map[string][]string{
		"merchant session": dash,
		"API key":          acct.key(sika.EnvironmentTest, sika.ScopeBoth),
	} {
		r := ts.call(t, "POST", approve, map[string]string{}, headers...)
		assert.Equal(t, 403, r.Status, name)
		assert.Equal(t, "admin_only", r.code(), name)
	}
	assert.Equal(t, 404, ts.call(t, "POST", "/api/v1/admin/merchant-kyc/"+uuid.NewString()+"/approve/", nil, staff...).Status)
	r := ts.call(t, "POST", approve, map[string]int{"review_note": 1}, staff...)
	assert.Equal(t, 400, r.Status)
	assert.Contains(t, r.fields(), "review_note")

	approved := ts.reviewKYC(t, staff, dossier.ID, sika.KYCDossierApproved, "All good.")
	assert.Len(t, approved.Documents, 1)
	m := merchantNow(t, acct.Merchant.ID)
	assert.Equal(t, sika.KYCVerified, m.KYCStatus)
	assert.True(t, m.IsActive)

	events := kycEvents(t, acct.Merchant.ID, sika.EventKYCApproved)
	require.Len(t, events, 2, "one kyc.approved per environment")
	for env, data := range events {
		assert.Equal(t, approved.ID, data.ID, env)
		assert.Equal(t, sika.KYCDossierApproved, data.Status, env)
		assert.Equal(t, approved.Documents, data.Documents, "%s: the dossier as the API returns it", env)
	}

	r = ts.call(t, "POST", approve, nil, staff...)
	assert.Equal(t, 409, r.Status)
	assert.Equal(t, "not_pending", r.code())
	assert.Contains(t, string(r.Body), "KYC dossier is APPROVED, not PENDING.")
	r = ts.call(t, "POST", "/api/v1/admin/merchant-kyc/"+dossier.ID.String()+"/reject/", nil, staff...)
	assert.Equal(t, 409, r.Status)
	assert.Len(t, kycEvents(t, acct.Merchant.ID, sika.EventKYCRejected), 0)

	// Rejection keeps the merchant as it was (here PENDING again, after a new dossier, and active).
	next := ts.submitKYC(t, dash, map[string]any{"kyc_type": "BUSINESS"})
	ts.reviewKYC(t, staff, next.ID, sika.KYCDossierRejected, "RCCM missing.")
	m = merchantNow(t, acct.Merchant.ID)
	assert.Equal(t, sika.KYCPending, m.KYCStatus)
	assert.True(t, m.IsActive)
	rejections := kycEvents(t, acct.Merchant.ID, sika.EventKYCRejected)
	assert.Len(t, rejections, 2)
	assert.Equal(t, next.ID, rejections[sika.EnvironmentLive].ID)
}

func TestSuspendMerchant(t *testing.T) {
	ts, _ := kycServer(t)
	acct := ts.newAccount(t, true)
	staff := ts.staff(t)
	suspend := "/api/v1/admin/merchants/" + acct.Merchant.ID.String() + "/suspend/"
	unsuspend := "/api/v1/admin/merchants/" + acct.Merchant.ID.String() + "/unsuspend/"
	key := acct.key(sika.EnvironmentTest, sika.ScopeBoth)

	for name, headers := range map[string][]string{"merchant session": acct.dashboard(sika.EnvironmentTest), "API key": key} {
		r := ts.call(t, "POST", suspend, nil, headers...)
		assert.Equal(t, 403, r.Status, name)
		assert.Equal(t, "admin_only", r.code(), name)
	}
	assert.Equal(t, 404, ts.call(t, "POST", "/api/v1/admin/merchants/"+uuid.NewString()+"/suspend/", nil, staff...).Status)

	for range 2 { // suspending twice changes nothing
		r := ts.call(t, "POST", suspend, nil, staff...)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var m sika.Merchant
		r.data(t, &m)
		assert.True(t, m.IsSuspended)
	}
	for _, env := range []sika.Environment{sika.EnvironmentTest, sika.EnvironmentLive} {
		r := ts.call(t, "GET", "/api/v1/networks/", nil, acct.key(env, sika.ScopePayin)...)
		assert.Equal(t, 403, r.Status, env)
		assert.Equal(t, "merchant_suspended", r.code(), env)
	}
	assert.Equal(t, 200, ts.call(t, "GET", "/api/v1/merchant-kyc/", nil, acct.dashboard(sika.EnvironmentLive)...).Status,
		"a suspended merchant's members may still look")

	r := ts.call(t, "POST", unsuspend, nil, staff...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	var m sika.Merchant
	r.data(t, &m)
	assert.False(t, m.IsSuspended)
	assert.Equal(t, 200, ts.call(t, "GET", "/api/v1/networks/", nil, key...).Status)
}

// TestKYCOnboarding walks a new merchant through HTTP only: register, submit a dossier, upload
// and attach a document, staff approval; its LIVE key works from then on, until a suspension.
func TestKYCOnboarding(t *testing.T) {
	ts, _ := kycServer(t)
	r := ts.call(t, "POST", "/api/v1/auth/register/", map[string]string{"email": "onboard-" + uuid.NewString()[:8] + "@example.com",
		"password": "correct horse battery", "full_name": "Awa Diallo", "business_name": "Awa Couture", "country": "BJ"})
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var session struct {
		AccessToken string                    `json:"access_token"`
		Merchants   []sika.MerchantMembership `json:"merchants"`
	}
	r.data(t, &session)
	require.Len(t, session.Merchants, 1)
	merchant := session.Merchants[0]
	assert.Equal(t, sika.KYCPending, merchant.KYCStatus)
	assert.False(t, merchant.IsActive)
	dash := func(env sika.Environment) []string {
		return append(bearer(session.AccessToken), "X-Environment", string(env))
	}

	newKey := func(env sika.Environment) []string {
		r := ts.call(t, "POST", "/api/v1/api-keys/", map[string]string{"scope": "BOTH", "name": "server"}, dash(env)...)
		require.Equal(t, 201, r.Status, "%s", r.Body)
		var k sika.APIKey
		r.data(t, &k)
		return bearer(k.Secret)
	}
	live, test := newKey(sika.EnvironmentLive), newKey(sika.EnvironmentTest)
	networks := func(key []string) *response { return ts.call(t, "GET", "/api/v1/networks/", nil, key...) }
	r = networks(live)
	assert.Equal(t, 403, r.Status)
	assert.Equal(t, "merchant_inactive", r.code())
	assert.Equal(t, 200, networks(test).Status, "TEST works before KYC")

	dossier := ts.submitKYC(t, dash(sika.EnvironmentLive), map[string]any{"merchant": merchant.ID.String(), "kyc_type": "INDIVIDUAL",
		"first_name": "Awa", "last_name": "Diallo", "date_of_birth": "1988-04-02", "id_document_type": "passport"})
	for _, doc := range []struct {
		typ     string
		content []byte
	}{{"PASSPORT", kycJPEG(t)}, {"SELFIE", kycWebP()}} {
		url := ts.uploadedKYC(t, dash(sika.EnvironmentLive), doc.content)
		r := ts.attachKYC(t, dash(sika.EnvironmentLive), dossier.ID, map[string]string{"document_type": doc.typ, "file_url": url})
		require.Equal(t, 201, r.Status, "%s", r.Body)
	}
	assert.Equal(t, 403, networks(live).Status, "still inactive while PENDING")

	staff := ts.staff(t)
	file := ts.call(t, "GET", dossierFileURL(t, ts, dash(sika.EnvironmentLive), dossier.ID), nil, staff...)
	assert.Equal(t, 200, file.Status, "staff read the documents they review")
	reviewed := ts.reviewKYC(t, staff, dossier.ID, sika.KYCDossierApproved, "Passport matches.")
	assert.Len(t, reviewed.Documents, 2)
	var seen sika.KYCDossier
	ts.call(t, "GET", "/api/v1/merchant-kyc/"+dossier.ID.String()+"/", nil, live...).data(t, &seen)
	assert.Equal(t, sika.KYCDossierApproved, seen.Status, "the LIVE key now reads")
	assert.Equal(t, 200, networks(live).Status)
	var mine []sika.MerchantMembership
	ts.call(t, "GET", "/api/v1/auth/merchants/", nil, bearer(session.AccessToken)...).data(t, &mine)
	assert.Equal(t, sika.KYCVerified, mine[0].KYCStatus)
	assert.True(t, mine[0].IsActive)

	require.Equal(t, 200, ts.call(t, "POST", "/api/v1/admin/merchants/"+merchant.ID.String()+"/suspend/", nil, staff...).Status)
	r = networks(live)
	assert.Equal(t, 403, r.Status)
	assert.Equal(t, "merchant_suspended", r.code())
	require.Equal(t, 200, ts.call(t, "POST", "/api/v1/admin/merchants/"+merchant.ID.String()+"/unsuspend/", nil, staff...).Status)
	assert.Equal(t, 200, networks(live).Status)
}

// dossierFileURL is the file URL of a dossier's first document.
func dossierFileURL(t *testing.T, ts *testServer, headers []string, dossier uuid.UUID) string {
	t.Helper()
	var docs []sika.KYCDocument
	ts.call(t, "GET", "/api/v1/merchant-kyc/"+dossier.String()+"/documents/", nil, headers...).data(t, &docs)
	require.NotEmpty(t, docs)
	return docs[0].FileURL
}
