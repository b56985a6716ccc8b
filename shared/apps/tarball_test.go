package apps

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// entry is one tar entry to write; a zero Typeflag is a regular file of body.
type entry struct {
	hdr  tar.Header
	body string
	// size, when set, is the file's length in zero bytes instead of body.
	size int64
}

func file(name, body string) entry {
	return entry{hdr: tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg}, body: body}
}

func zeros(name string, size int64) entry {
	return entry{hdr: tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg}, size: size}
}

func special(name string, typ byte, link string) entry {
	return entry{hdr: tar.Header{Name: name, Mode: 0o644, Typeflag: typ, Linkname: link}}
}

// tarball gzips a tar of entries.
func tarball(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := e.hdr
		switch {
		case e.size > 0:
			h.Size = e.size
		case h.Typeflag == tar.TypeReg:
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatalf("writing header %s: %v", h.Name, err)
		}
		var body io.Reader = strings.NewReader(e.body)
		if e.size > 0 {
			body = io.LimitReader(zeroReader{}, e.size)
		}
		if _, err := io.Copy(tw, body); err != nil {
			t.Fatalf("writing %s: %v", h.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestCheckTarballAccepts(t *testing.T) {
	b := tarball(t,
		entry{hdr: tar.Header{Name: "./", Mode: 0o755, Typeflag: tar.TypeDir}},
		file("./package.json", `{"name":"agent"}`),
		entry{hdr: tar.Header{Name: "src/", Mode: 0o755, Typeflag: tar.TypeDir}},
		file("src/index.js", "console.log('hi')\n"),
		file("src/"+strings.Repeat("long-name-", 20)+".js", "x"),
	)
	src, err := CheckTarball(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("CheckTarball(a plain app) = %v", err)
	}
	sum := sha256.Sum256(b)
	want := Sources{SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(b)), Entries: 5, UnpackedBytes: int64(len(`{"name":"agent"}`) + len("console.log('hi')\n") + 1)}
	if !reflect.DeepEqual(src, want) {
		t.Errorf("CheckTarball(a plain app) = %+v, want %+v", src, want)
	}
}

// TestCheckTarballKeepsTheLaunchFile: the launch file at the root is kept for ParseLaunch, and
// counted as unpacked like any file; one in a folder is an ordinary file.
func TestCheckTarballKeepsTheLaunchFile(t *testing.T) {
	const launch = `{"start": ["python3", "-m", "bot"], "runtime": "python3.12"}`
	b := tarball(t,
		file("./tidegate.json", launch),
		file("lib/tidegate.json", `{"start": ["other"]}`),
		file("bot/__main__.py", "print('hi')\n"),
	)
	src, err := CheckTarball(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if string(src.Launch) != launch {
		t.Errorf("CheckTarball kept launch %q, want the root's %q", src.Launch, launch)
	}
	if want := int64(len(launch) + len(`{"start": ["other"]}`) + len("print('hi')\n")); src.UnpackedBytes != want {
		t.Errorf("unpacked bytes = %d, want %d", src.UnpackedBytes, want)
	}
	big := tarball(t, file("tidegate.json", strings.Repeat(" ", maxLaunchBytes+100)+"{}"))
	src, err = CheckTarball(bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Launch) != maxLaunchBytes+1 {
		t.Errorf("an oversized launch file kept %d bytes, want its bound and one more", len(src.Launch))
	}
	if _, err := ParseLaunch(src.Launch, nil); err == nil {
		t.Error("ParseLaunch(an oversized launch file) = nil error")
	}
}

func TestCheckTarballRefuses(t *testing.T) {
	many := make([]entry, MaxEntries+1)
	for i := range many {
		many[i] = file("f"+strconv.Itoa(i), "")
	}
	tests := []struct {
		name      string
		body      []byte
		wantEntry string
		wantText  string
	}{
		{"dot-dot", tarball(t, file("ok.txt", "a"), file("../evil", "x")), "../evil", "'..'"},
		{"dot-dot inside", tarball(t, file("a/../../b", "x")), "a/../../b", "'..'"},
		{"absolute path", tarball(t, file("/etc/passwd", "root::0:0")), "/etc/passwd", "absolute"},
		{"symlink", tarball(t, special("link", tar.TypeSymlink, "/etc/shadow")), "link", "symbolic link"},
		{"hardlink", tarball(t, file("a", "x"), special("b", tar.TypeLink, "a")), "b", "hard link"},
		{"char device", tarball(t, special("null", tar.TypeChar, "")), "null", "character device"},
		{"block device", tarball(t, special("sda", tar.TypeBlock, "")), "sda", "block device"},
		{"fifo", tarball(t, special("pipe", tar.TypeFifo, "")), "pipe", "fifo"},
		{"backslash", tarball(t, file(`..\evil`, "x")), `..\evil`, `'\'`},
		{"too many entries", tarball(t, many...), "", "more than 5000 entries"},
		{"empty", tarball(t), "", "no files"},
		{"not gzip", []byte("PK\x03\x04 this is a zip"), "", "not a gzip"},
		{"gzip of text", gzipped(t, []byte("just some text, not a tar archive at all, long enough to need a header block...")), "", "not a tar"},
		{"trailing garbage", append(tarball(t, file("a", "x")), "garbage"...), "", "past the gzip stream"},
		{"truncated", tarball(t, file("a", strings.Repeat("y", 5000)))[:40], "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CheckTarball(bytes.NewReader(tt.body))
			var te *TarballError
			if !errors.As(err, &te) {
				t.Fatalf("CheckTarball(%s) = %v, want a *TarballError", tt.name, err)
			}
			if te.Entry != tt.wantEntry || !strings.Contains(te.Error(), tt.wantText) {
				t.Errorf("CheckTarball(%s) = entry %q, %q; want entry %q and a message with %q", tt.name, te.Entry, te.Error(), tt.wantEntry, tt.wantText)
			}
		})
	}
}

func gzipped(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	if _, err := gz.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestCheckTarballStopsEarlyOnABomb: files past 100 MiB unpacked are refused at the header that
// crosses the bound, before their bytes are inflated, so most of the upload is never read.
func TestCheckTarballStopsEarlyOnABomb(t *testing.T) {
	tests := []struct {
		name    string
		entries []entry
	}{
		{"one file over the bound", []entry{file("a", "x"), zeros("big", MaxUnpackedBytes+1), zeros("more", 1<<20)}},
		{"files that add up past it", []entry{zeros("a", 40<<20), zeros("b", 40<<20), zeros("c", 40<<20), zeros("d", 40<<20)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tarball(t, tt.entries...)
			if len(b) > MaxPackedBytes {
				t.Fatalf("the bomb is %d bytes packed, over the upload limit; it would not reach CheckTarball", len(b))
			}
			in := &countingReader{r: bytes.NewReader(b)}
			_, err := CheckTarball(in)
			var te *TarballError
			if !errors.As(err, &te) || !strings.Contains(te.Error(), "more than 100 MiB") {
				t.Fatalf("CheckTarball(%s) = %v, want the 100 MiB refusal", tt.name, err)
			}
			if in.n >= len(b)*3/4 {
				t.Errorf("CheckTarball(%s) read %d of %d bytes before refusing; want it to stop at the header that crosses the bound", tt.name, in.n, len(b))
			}
		})
	}
}

// TestCheckTarballKeepsReadErrors: an error of the body itself (over the request's limit, say) is
// answered wrapped, not worded as a bad tarball.
func TestCheckTarballKeepsReadErrors(t *testing.T) {
	errLimit := errors.New("body over its limit")
	b := tarball(t, file("a", strings.Repeat("abcdefgh", 4096)))
	_, err := CheckTarball(io.MultiReader(bytes.NewReader(b[:len(b)/2]), errReader{errLimit}))
	if !errors.Is(err, errLimit) {
		t.Errorf("CheckTarball(body failing half-way) = %v, want it to wrap the body's error", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// FuzzCheckTarball: any input is accepted with a digest of exactly what was read, or refused with
// a *TarballError; never a panic, never another error.
func FuzzCheckTarball(f *testing.F) {
	f.Add(tarball(f, file("a", "x")))
	f.Add(tarball(f, file("../evil", "x")))
	f.Add(tarball(f, special("l", tar.TypeSymlink, "/")))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Add([]byte("not gzip"))
	f.Fuzz(func(t *testing.T, b []byte) {
		src, err := CheckTarball(bytes.NewReader(b))
		if err != nil {
			var te *TarballError
			if !errors.As(err, &te) {
				t.Fatalf("CheckTarball(%q) = %v, want a *TarballError", b, err)
			}
			return
		}
		sum := sha256.Sum256(b)
		if src.SHA256 != hex.EncodeToString(sum[:]) || src.Bytes != int64(len(b)) || src.Entries == 0 {
			t.Errorf("CheckTarball(%q) = %+v, want the digest and length of the whole input and at least one entry", b, src)
		}
	})
}
