package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"
)

// packed is what pack put in the tarball.
type packed struct {
	Files   int
	Bytes   int64 // the files' sizes before compression
	Skipped []string
}

// The tarball says nothing about the machine it was made on: fixed times, owners and modes, so the
// same sources always make the same bytes, and the same release digest.
var packTime = time.Unix(0, 0).UTC()

const (
	packFileMode = 0o644
	packExecMode = 0o755 // a file any of whose execute bits was set keeps being executable
	packDirMode  = 0o755
)

// errSymlink is what pack refuses: a link may point outside the folder, and the host would
// follow it to nothing.
var errSymlink = errors.New("is a symbolic link; the upload takes only regular files and folders: copy the file it points to in its place, or list it in " + ignoreFile)

// pack writes the folder fsys as a gzip tar, in lexical order, without node_modules, .git, .env
// or what its .tidegateignore lists. A symbolic link or any other special file is an error
// naming it, unless it is left out.
func pack(fsys fs.FS, w io.Writer) (packed, error) {
	var p packed
	rules, err := readIgnore(fsys)
	if err != nil {
		return p, err
	}
	zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	zw.ModTime = packTime
	tw := tar.NewWriter(zw)
	err = fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if alwaysSkipped[d.Name()] || rules.ignored(rel, d.IsDir()) {
			p.Skipped = append(p.Skipped, rel)
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			return fmt.Errorf("%s %w", rel, errSymlink)
		case d.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: packDirMode, ModTime: packTime, Format: tar.FormatPAX})
		case !t.IsRegular():
			return fmt.Errorf("%s is a %s, not a regular file; list it in %s to leave it out", rel, t.Type(), ignoreFile)
		}
		return p.addFile(fsys, tw, rel, d)
	})
	if err != nil {
		return p, err
	}
	if err := tw.Close(); err != nil {
		return p, err
	}
	return p, zw.Close()
}

func (p *packed) addFile(fsys fs.FS, tw *tar.Writer, rel string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	mode := int64(packFileMode)
	if info.Mode()&0o111 != 0 {
		mode = packExecMode
	}
	b, err := fs.ReadFile(fsys, rel)
	if err != nil {
		return err
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: rel, Size: int64(len(b)), Mode: mode, ModTime: packTime, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := tw.Write(b); err != nil {
		return err
	}
	p.Files++
	p.Bytes += int64(len(b))
	return nil
}

// readIgnore reads the folder's .tidegateignore, if it has one.
func readIgnore(fsys fs.FS) (ignoreRules, error) {
	b, err := fs.ReadFile(fsys, ignoreFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ignoreFile, err)
	}
	return parseIgnore(bytes.NewReader(b))
}

// packedNames lists a tarball's entries, for tests and for a deploy's dry run.
func packedNames(tgz []byte) ([]string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return nil, err
		}
		name := path.Clean(h.Name)
		if h.Typeflag == tar.TypeDir {
			name += "/"
		}
		names = append(names, name)
	}
}
