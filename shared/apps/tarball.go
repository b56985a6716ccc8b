package apps

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"strings"
)

// Bounds of an upload: sources, not dependencies (the host installs those itself), so 10 MB
// packed is plenty; 100 MB unpacked and 5,000 entries bound what an install unpacks.
const (
	MaxPackedBytes   = 10 << 20
	MaxUnpackedBytes = 100 << 20
	MaxEntries       = 5000
	// maxTarOverhead is what a tar adds around its files' bytes: each entry's 512-byte header and
	// up to 511 bytes of padding, PAX records for long names, and the end-of-archive blocks.
	// 16 MiB covers MaxEntries entries with room to spare.
	maxTarOverhead = 16 << 20
)

// Sources is what a checked tarball is: the digest and length of its packed bytes, which name it
// in the sources bucket, and what it unpacks to.
type Sources struct {
	SHA256        string
	Bytes         int64
	Entries       int
	UnpackedBytes int64
	// Launch is the LaunchFile at the sources' root (up to one byte past its bound, so
	// ParseLaunch can refuse it whole), nil when there is none.
	Launch []byte
}

// TarballError is an upload refused: the entry at fault (empty when it is the whole file) and
// what is wrong with it.
type TarballError struct {
	Entry   string
	Problem string
}

func (e *TarballError) Error() string {
	if e.Entry == "" {
		return "the sources " + e.Problem
	}
	return fmt.Sprintf("entry %q %s", e.Entry, e.Problem)
}

// What an upload is told, kept together.
const (
	problemNotGzip    = "are not a gzip file (%v); send a .tar.gz, e.g. `tar -czf app.tar.gz -C app .`"
	problemNotTar     = "are not a tar archive inside the gzip (%v); send a .tar.gz"
	problemEmpty      = "hold no files; send a .tar.gz of the app's folder"
	problemEntries    = "have more than %d entries; send the sources, not their dependencies (the host installs those)"
	problemUnpacked   = "unpack to more than %d MiB; send the sources, not their dependencies (the host installs those)"
	problemAbsolute   = "is an absolute path; paths must be relative to the app's folder"
	problemDotDot     = "has a '..' component, which would land outside the app's folder; remove it"
	problemLink       = "is a %s; the sources may hold only files and folders, so copy the target in instead"
	problemSpecial    = "is a %s; the sources may hold only files and folders"
	problemEmptyName  = "has an empty name"
	problemBackslash  = "has a '\\' in its path; use '/' between folders"
	problemTrailingGz = "continue past the gzip stream (%v); send one .tar.gz and nothing after it"
)

// CheckTarball reads a gzipped tar to its end and answers its digest, or a *TarballError for the
// first thing that makes it unfit to unpack: an absolute path, a '..' component, a link, a device
// or fifo, too many entries or too many bytes unpacked. It stops at the first problem, so a
// gzip bomb costs no more than MaxUnpackedBytes of inflating. An error reading r is answered
// wrapped, so a caller can tell a body over its limit.
func CheckTarball(r io.Reader) (Sources, error) {
	packed := &digestReader{r: r, h: sha256.New()}
	gz, err := gzip.NewReader(packed)
	if err != nil {
		return Sources{}, readError(packed, err, problemNotGzip)
	}
	unpacked := &boundedReader{r: gz, left: MaxUnpackedBytes + maxTarOverhead}
	src, err := checkEntries(tar.NewReader(unpacked))
	if err != nil {
		return Sources{}, readError(packed, err, problemNotTar)
	}
	// Read the rest through gzip, which checks its CRC and length only at the stream's end.
	if _, err := io.Copy(io.Discard, unpacked); err != nil {
		return Sources{}, readError(packed, err, problemTrailingGz)
	}
	src.SHA256, src.Bytes = hex.EncodeToString(packed.h.Sum(nil)), packed.n
	return src, nil
}

// checkEntries walks the archive's headers, reading each file's bytes only to count them.
func checkEntries(tr *tar.Reader) (Sources, error) {
	var src Sources
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return src, err
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // `git archive` writes one: metadata, not an entry
		}
		if src.Entries++; src.Entries > MaxEntries {
			return src, &TarballError{Problem: fmt.Sprintf(problemEntries, MaxEntries)}
		}
		if err := checkEntry(hdr); err != nil {
			return src, err
		}
		if hdr.Size > MaxUnpackedBytes-src.UnpackedBytes {
			return src, tooBig()
		}
		var kept bytes.Buffer
		if hdr.Typeflag != tar.TypeDir && path.Clean(hdr.Name) == LaunchFile {
			if _, err := io.CopyN(&kept, tr, maxLaunchBytes+1); err != nil && !errors.Is(err, io.EOF) {
				return src, err
			}
			src.Launch = kept.Bytes()
		}
		n, err := io.Copy(io.Discard, tr)
		if err != nil {
			return src, err
		}
		src.UnpackedBytes += n + int64(kept.Len())
	}
	if src.Entries == 0 {
		return src, &TarballError{Problem: problemEmpty}
	}
	return src, nil
}

// checkEntry refuses an entry that could write outside the app's folder or is not a plain file
// or folder.
func checkEntry(hdr *tar.Header) error {
	name := hdr.Name
	bad := func(problem string, args ...any) error {
		return &TarballError{Entry: name, Problem: fmt.Sprintf(problem, args...)}
	}
	switch hdr.Typeflag {
	case tar.TypeReg, tar.TypeRegA, tar.TypeDir:
	case tar.TypeSymlink:
		return bad(problemLink, "symbolic link (to "+hdr.Linkname+")")
	case tar.TypeLink:
		return bad(problemLink, "hard link (to "+hdr.Linkname+")")
	case tar.TypeChar:
		return bad(problemSpecial, "character device")
	case tar.TypeBlock:
		return bad(problemSpecial, "block device")
	case tar.TypeFifo:
		return bad(problemSpecial, "fifo")
	default:
		return bad(problemSpecial, fmt.Sprintf("tar entry of type %q", hdr.Typeflag))
	}
	switch {
	case strings.Trim(name, "/.") == "" && hdr.Typeflag != tar.TypeDir:
		return bad(problemEmptyName)
	case strings.HasPrefix(name, "/"):
		return bad(problemAbsolute)
	case strings.Contains(name, `\`):
		return bad(problemBackslash)
	}
	for part := range strings.SplitSeq(name, "/") {
		if part == ".." {
			return bad(problemDotDot)
		}
	}
	return nil
}

// readError keeps a *TarballError and the underlying reader's own error as they are (so a body
// over its limit is told apart) and words anything else from gzip or tar with problem.
func readError(packed *digestReader, err error, problem string) error {
	var te *TarballError
	switch {
	case errors.As(err, &te):
		return err
	case packed.err != nil && !errors.Is(packed.err, io.EOF):
		return fmt.Errorf("reading the sources: %w", packed.err)
	case errors.Is(err, errTooMuch):
		return tooBig()
	}
	return &TarballError{Problem: fmt.Sprintf(problem, err)}
}

// digestReader hashes and counts what is read through it, and remembers its reader's error.
type digestReader struct {
	r   io.Reader
	h   hash.Hash
	n   int64
	err error
}

func (d *digestReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	_, _ = d.h.Write(p[:n])
	d.n += int64(n)
	if err != nil {
		d.err = err
	}
	return n, err
}

var errTooMuch = errors.New("unpacks past its bound")

func tooBig() error {
	return &TarballError{Problem: fmt.Sprintf(problemUnpacked, MaxUnpackedBytes>>20)}
}

// boundedReader fails once more than left bytes were read through it.
type boundedReader struct {
	r    io.Reader
	left int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooMuch
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}
