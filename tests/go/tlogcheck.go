// SPDX-License-Identifier: Apache-2.0
//
// tlogcheck: an independent checker of kwitness's transparency logs, built
// on golang.org/x/mod/sumdb/tlog and sumdb/note (Debian's
// golang-golang-x-mod-dev), offline: GO111MODULE=off GOPATH=/usr/share/gocode.
//
//	tlogcheck log DIR VKEY            the checkpoint's signature (note.Open), every
//	                                  entry rehashed, every tile file rebuilt
//	                                  (tlog.ReadTileData) and compared, the root
//	                                  (tlog.TreeHash); the tiles read back through
//	                                  tlog.TileHashReader, which checks them
//	tlogcheck inclusion DIR PROOF...  each kwitness tlog-proof checked with
//	                                  tlog.CheckRecord and equal to tlog.ProveRecord
//	tlogcheck consistency DIR OLDCP REQ   a kwitness add-checkpoint body (old size,
//	                                  proof, checkpoint) checked with tlog.CheckTree
//	                                  and equal to tlog.ProveTree
//	tlogcheck prove DIR INDEX         print a tlog-proof made by tlog.ProveRecord
//	tlogcheck prove-tree DIR OLD      print an add-checkpoint body made by tlog.ProveTree
//
// Exit 0 and "ok ..." when everything holds, 1 with the reason otherwise.
package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const height = 8

func fail(format string, a ...interface{}) {
	fmt.Printf("FAIL "+format+"\n", a...)
	os.Exit(1)
}

// The C2SP path of a tile (level -1: entry bundle).
func tilePath(level int, n int64, w int) string {
	s := fmt.Sprintf("%03d", n%1000)
	for n /= 1000; n > 0; n /= 1000 {
		s = fmt.Sprintf("x%03d/", n%1000) + s
	}
	l := strconv.Itoa(level)
	if level < 0 {
		l = "entries"
	}
	p := "tile/" + l + "/" + s
	if w > 0 && w < 256 {
		p += ".p/" + strconv.Itoa(w)
	}
	return p
}

type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
	text   []byte // the whole signed note
}

func parseCheckpoint(text []byte) (checkpoint, []byte, error) {
	var c checkpoint
	i := bytes.LastIndex(text, []byte("\n\n"))
	if i < 0 {
		return c, nil, errors.New("no signatures")
	}
	lines := strings.Split(string(text[:i+1]), "\n")
	if len(lines) < 4 {
		return c, nil, errors.New("short checkpoint")
	}
	c.origin = lines[0]
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		return c, nil, err
	}
	c.size = n
	h, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(h) != 32 {
		return c, nil, errors.New("bad root")
	}
	copy(c.root[:], h)
	c.text = text
	return c, text[:i+1], nil
}

func readCheckpoint(dir string) checkpoint {
	b, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		fail("%v", err)
	}
	c, _, err := parseCheckpoint(b)
	if err != nil {
		fail("checkpoint: %v", err)
	}
	return c
}

// Every stored hash of the tree, from the entry bundles alone.
type store struct{ hashes []tlog.Hash }

func (s *store) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x < 0 || x >= int64(len(s.hashes)) {
			return nil, fmt.Errorf("hash %d not stored", x)
		}
		out[i] = s.hashes[x]
	}
	return out, nil
}

func entries(dir string, size int64) [][]byte {
	var out [][]byte
	for n := int64(0); n*256 < size; n++ {
		w := 256
		if (n+1)*256 > size {
			w = int(size - n*256)
		}
		b, err := os.ReadFile(filepath.Join(dir, tilePath(-1, n, w)))
		if err != nil {
			fail("%v", err)
		}
		for i := 0; i < w; i++ {
			if len(b) < 2 {
				fail("bundle %d: short", n)
			}
			l := int(b[0])<<8 | int(b[1])
			if len(b) < 2+l {
				fail("bundle %d: short entry", n)
			}
			out = append(out, b[2:2+l])
			b = b[2+l:]
		}
		if len(b) != 0 {
			fail("bundle %d: trailing bytes", n)
		}
	}
	return out
}

func build(dir string, size int64) *store {
	s := &store{}
	for i, e := range entries(dir, size) {
		h, err := tlog.StoredHashes(int64(i), e, s)
		if err != nil {
			fail("StoredHashes: %v", err)
		}
		s.hashes = append(s.hashes, h...)
	}
	return s
}

// kwitness's tile files, for tlog.TileHashReader.
type tileFiles struct{ dir string }

func (t tileFiles) Height() int { return height }
func (t tileFiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, x := range tiles {
		b, err := os.ReadFile(filepath.Join(t.dir, tilePath(x.L, x.N, x.W)))
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
func (t tileFiles) SaveTiles([]tlog.Tile, [][]byte) {}

func checkLog(dir, vkey string) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		fail("vkey: %v", err)
	}
	c := readCheckpoint(dir)
	if _, err := note.Open(c.text, note.VerifierList(v)); err != nil {
		fail("note.Open: %v", err)
	}
	if c.origin != v.Name() {
		fail("origin %q is not the key's name %q", c.origin, v.Name())
	}
	s := build(dir, c.size)
	root, err := tlog.TreeHash(c.size, s)
	if err != nil || root != c.root {
		fail("TreeHash %v != checkpoint root %v (%v)", root, c.root, err)
	}
	// NewTiles lists every width a partial tile passed through; the log
	// keeps the one its checkpoint needs.
	var tiles []tlog.Tile
	for _, t := range tlog.NewTiles(height, 0, c.size) {
		if t.W == 1<<height || int64(t.W) == (c.size>>(height*t.L))-t.N<<height {
			tiles = append(tiles, t)
		}
	}
	for _, t := range tiles {
		want, err := tlog.ReadTileData(t, s)
		if err != nil {
			fail("ReadTileData: %v", err)
		}
		got, err := os.ReadFile(filepath.Join(dir, tilePath(t.L, t.N, t.W)))
		if err != nil || !bytes.Equal(got, want) {
			fail("tile %s differs from the tree (%v)", tilePath(t.L, t.N, t.W), err)
		}
	}
	// The tiles alone, as a client would use them, prove the last entry.
	if c.size > 0 {
		hr := tlog.TileHashReader(tlog.Tree{N: c.size, Hash: c.root}, tileFiles{dir})
		p, err := tlog.ProveRecord(c.size, c.size-1, hr)
		if err != nil {
			fail("ProveRecord through the tiles: %v", err)
		}
		if err := tlog.CheckRecord(p, c.size, c.root, c.size-1, s.hashes[tlog.StoredHashIndex(0, c.size-1)]); err != nil {
			fail("CheckRecord: %v", err)
		}
	}
	fmt.Printf("ok log %s: %d entries, %d tiles, root and signature verified\n", c.origin, c.size, len(tiles))
}

func parseProof(b []byte) (int64, tlog.RecordProof, checkpoint) {
	parts := bytes.SplitN(b, []byte("\n\n"), 2)
	if len(parts) != 2 {
		fail("proof: no checkpoint")
	}
	lines := strings.Split(string(parts[0]), "\n")
	if lines[0] != "c2sp.org/tlog-proof@v1" {
		fail("proof: header")
	}
	lines = lines[1:]
	if strings.HasPrefix(lines[0], "extra ") {
		lines = lines[1:]
	}
	if !strings.HasPrefix(lines[0], "index ") {
		fail("proof: no index")
	}
	idx, err := strconv.ParseInt(lines[0][6:], 10, 64)
	if err != nil {
		fail("proof: index: %v", err)
	}
	var p tlog.RecordProof
	for _, l := range lines[1:] {
		h, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(h) != 32 {
			fail("proof: bad hash line")
		}
		var x tlog.Hash
		copy(x[:], h)
		p = append(p, x)
	}
	c, _, err := parseCheckpoint(parts[1])
	if err != nil {
		fail("proof checkpoint: %v", err)
	}
	return idx, p, c
}

func checkInclusion(dir string, files []string) {
	c := readCheckpoint(dir)
	s := build(dir, c.size)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fail("%v", err)
		}
		idx, p, pc := parseProof(b)
		if pc.size > c.size {
			fail("%s: proof checkpoint past the log", f)
		}
		leaf := s.hashes[tlog.StoredHashIndex(0, idx)]
		if err := tlog.CheckRecord(p, pc.size, pc.root, idx, leaf); err != nil {
			fail("%s: CheckRecord: %v", f, err)
		}
		want, err := tlog.ProveRecord(pc.size, idx, s)
		if err != nil || len(want) != len(p) {
			fail("%s: ProveRecord gives another path (%v)", f, err)
		}
		for i := range want {
			if want[i] != p[i] {
				fail("%s: path hash %d differs from ProveRecord", f, i)
			}
		}
	}
	fmt.Printf("ok inclusion: %d proofs checked\n", len(files))
}

func checkConsistency(dir, oldFile, reqFile string) {
	ob, err := os.ReadFile(oldFile)
	if err != nil {
		fail("%v", err)
	}
	oc, _, err := parseCheckpoint(ob)
	if err != nil {
		fail("old: %v", err)
	}
	rb, err := os.ReadFile(reqFile)
	if err != nil {
		fail("%v", err)
	}
	parts := bytes.SplitN(rb, []byte("\n\n"), 2)
	lines := strings.Split(string(parts[0]), "\n")
	old, err := strconv.ParseInt(strings.TrimPrefix(lines[0], "old "), 10, 64)
	if err != nil || old != oc.size {
		fail("request old size %v is not the old checkpoint's %d", lines[0], oc.size)
	}
	var p tlog.TreeProof
	for _, l := range lines[1:] {
		h, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(h) != 32 {
			fail("bad proof line")
		}
		var x tlog.Hash
		copy(x[:], h)
		p = append(p, x)
	}
	nc, _, err := parseCheckpoint(parts[1])
	if err != nil {
		fail("new: %v", err)
	}
	if err := tlog.CheckTree(p, nc.size, nc.root, oc.size, oc.root); err != nil {
		fail("CheckTree %d -> %d: %v", oc.size, nc.size, err)
	}
	s := build(dir, nc.size)
	want, err := tlog.ProveTree(nc.size, oc.size, s)
	if err != nil || len(want) != len(p) {
		fail("ProveTree gives another proof (%v)", err)
	}
	for i := range want {
		if want[i] != p[i] {
			fail("proof hash %d differs from ProveTree", i)
		}
	}
	fmt.Printf("ok consistency %d -> %d\n", oc.size, nc.size)
}

func b64(h tlog.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

func prove(dir string, idx int64) {
	c := readCheckpoint(dir)
	s := build(dir, c.size)
	p, err := tlog.ProveRecord(c.size, idx, s)
	if err != nil {
		fail("ProveRecord: %v", err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "c2sp.org/tlog-proof@v1\nindex %d\n", idx)
	for _, h := range p {
		fmt.Fprintf(&out, "%s\n", b64(h))
	}
	out.WriteString("\n")
	out.Write(c.text)
	os.Stdout.Write(out.Bytes())
}

func proveTree(dir string, old int64) {
	c := readCheckpoint(dir)
	s := build(dir, c.size)
	p, err := tlog.ProveTree(c.size, old, s)
	if err != nil {
		fail("ProveTree: %v", err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "old %d\n", old)
	for _, h := range p {
		fmt.Fprintf(&out, "%s\n", b64(h))
	}
	out.WriteString("\n")
	out.Write(c.text)
	os.Stdout.Write(out.Bytes())
}

func main() {
	a := os.Args
	if len(a) < 3 {
		fail("usage: tlogcheck log|inclusion|consistency|prove|prove-tree DIR ...")
	}
	switch {
	case a[1] == "log" && len(a) == 4:
		checkLog(a[2], a[3])
	case a[1] == "inclusion" && len(a) >= 4:
		checkInclusion(a[2], a[3:])
	case a[1] == "consistency" && len(a) == 5:
		checkConsistency(a[2], a[3], a[4])
	case a[1] == "prove" && len(a) == 4:
		n, _ := strconv.ParseInt(a[3], 10, 64)
		prove(a[2], n)
	case a[1] == "prove-tree" && len(a) == 4:
		n, _ := strconv.ParseInt(a[3], 10, 64)
		proveTree(a[2], n)
	default:
		fail("bad arguments")
	}
}
