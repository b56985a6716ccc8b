package hostrun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxKept is the most of a container's output kept on this machine: a kubelet's
// containerLogMaxSize default (10Mi), so a chatty app cannot fill the disk.
const maxKept = 10 << 20

// keptLog is a container's log file, rotated as a kubelet rotates one so it never holds more than
// max bytes: a write that would take it past max first replaces the file with its newest whole
// lines, at most half of max, so what `kubectl logs` (and the apps logs route) reads through
// kwok is always the newest output. Each Write is one whole CRI entry (criLog writes them so),
// which keeps every cut on an entry's boundary; max is far above an entry's size (maxLine).
type keptLog struct {
	path string
	max  int64
	f    *os.File
	size int64
}

// openKept opens the log file at path, as it is, to append to it under max bytes.
func openKept(path string, max int64) (*keptLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &keptLog{path: path, max: max, f: f, size: fi.Size()}, nil
}

func (k *keptLog) Write(p []byte) (int, error) {
	if k.size+int64(len(p)) > k.max {
		if err := k.rotate(); err != nil {
			return 0, fmt.Errorf("rotating log %s: %w", k.path, err)
		}
	}
	n, err := k.f.Write(p)
	k.size += int64(n)
	return n, err
}

// rotate replaces the file with its newest whole lines, at most max/2 bytes, written to a new file
// renamed over it: a reader that has the old file open reads it to its end undisturbed.
func (k *keptLog) rotate() error {
	keep := min(k.size, k.max/2)
	tail := make([]byte, keep)
	if _, err := k.f.ReadAt(tail, k.size-keep); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if keep < k.size {
		// The cut fell inside an entry: drop what is left of it.
		i := bytes.IndexByte(tail, '\n')
		tail = tail[i+1:]
	}
	tmp := k.path + ".rotating"
	if err := os.WriteFile(tmp, tail, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, k.path); err != nil {
		os.Remove(tmp)
		return err
	}
	f, err := os.OpenFile(k.path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	k.f.Close()
	k.f, k.size = f, int64(len(tail))
	return nil
}

// Close closes the file.
func (k *keptLog) Close() error { return k.f.Close() }
