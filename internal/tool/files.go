package tool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/bmatcuk/doublestar/v4"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

const (
	maxRead    = 256 << 10 // bytes of a file read_file returns
	maxMatches = 200       // lines search returns
	maxEntries = 1000      // entries list_dir returns
	// search reads at most searchFileBytes of each file and
	// searchTotalBytes in all: a huge (or sparse) file costs no more.
	searchFileBytes  = 1 << 20
	searchTotalBytes = 64 << 20
	// maxEdit bounds the files edit_file reads whole.
	maxEdit = 16 << 20
)

// readFileArgs are read_file's arguments: offset and limit are told
// apart from none given.
type readFileArgs struct {
	Path   string `json:"path" jsonschema:"file path, relative to the session directory"`
	Offset *int   `json:"offset,omitempty" schema:"minimum=1" jsonschema:"first line to read, 1-based"`
	Limit  *int   `json:"limit,omitempty" schema:"minimum=1" jsonschema:"number of lines to read"`
}

type readFile struct{ takes[readFileArgs] }

func (t readFile) Spec() Spec {
	return Spec{Name: "read_file", Guide: "Read the files that matter with read_file before changing them, a long one in parts with its offset and limit.",
		Description: "Read a text file (path relative to the session directory). Returns at most 256 KiB. With offset or limit, returns those lines numbered as cat -n prints them, and says when more follow.",
		Schema:      t.schema()}
}
func (readFile) Asks() bool   { return false }
func (readFile) Kind() string { return protocol.KindRead }
func (t readFile) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Read " + a.Path
}
func (t readFile) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if a.Path == "" {
		return errorf("path is required")
	}
	lines := a.Offset != nil || a.Limit != nil
	offset, limit := 1, 0
	if a.Offset != nil {
		if offset = *a.Offset; offset < 1 {
			return errorf("offset is the first line to read, from 1 (got %d)", offset)
		}
	}
	if a.Limit != nil {
		if limit = *a.Limit; limit < 1 {
			return errorf("limit is a number of lines, at least 1 (got %d)", limit)
		}
	}
	numbered := func(r io.Reader) Result {
		out, err := numberedLines(ctx, r, offset, limit)
		if err != nil {
			return errorf("%s: %v", a.Path, err)
		}
		return Result{Output: out}
	}
	pl, err := openPlace(env)
	if err != nil {
		return errorf("%v", err)
	}
	defer pl.close()
	name, err := pl.name(a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	if read := env.clientRead(); read != nil {
		text, err := read(ctx, pl.abs(name))
		if err != nil {
			return errorf("%s: %v", a.Path, err)
		}
		if lines {
			return numbered(strings.NewReader(text))
		}
		if len(text) > maxRead {
			text = text[:maxRead] + readOn
		}
		return Result{Output: text}
	}
	f, _, err := pl.openRegular(name)
	if errors.Is(err, errIsDir) {
		return errorf("%s is a directory: use list_dir", a.Path)
	}
	if err != nil {
		return errorf("%v", pl.explain(a.Path, err))
	}
	defer f.Close()
	if lines {
		return numbered(f)
	}
	data, more, err := readAll(ctx, f, maxRead)
	if err != nil {
		return errorf("%s: %v", a.Path, err)
	}
	out := string(data)
	if more {
		out += readOn
	}
	return Result{Output: out}
}

// readOn ends a whole-file read cut at maxRead.
var readOn = fmt.Sprintf("\n[truncated: only the first %d bytes are shown; read on with offset and limit (lines)]", maxRead)

// maxLine bounds the bytes of one line a numbered read shows.
const maxLine = 2000

// numberedLines returns the lines of r from offset (1-based), at most
// limit of them (0: as many as fit in maxRead bytes), each as cat -n
// prints it (the number right-aligned in six places, a tab, the text),
// with a last line saying where to read on when more follow. A line over
// maxLine bytes is cut, and says so.
func numberedLines(ctx context.Context, r io.Reader, offset, limit int) (string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out strings.Builder
	n, shown := 0, 0
	for {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		line, cut, err := readLine(br)
		if err != nil && err != io.EOF {
			return "", err
		}
		if err == io.EOF && len(line) == 0 && !cut {
			break // the end (a last line ends in a newline or is empty)
		}
		n++
		if n >= offset {
			if limit > 0 && shown == limit {
				fmt.Fprintf(&out, "[more lines follow: read on with offset=%d]", n)
				return out.String(), nil
			}
			entry := fmt.Sprintf("%6d\t%s", n, line)
			if cut {
				entry += fmt.Sprintf(" [line cut at %d bytes]", maxLine)
			}
			entry += "\n"
			if out.Len()+len(entry) > maxRead-128 { // room for the last line
				fmt.Fprintf(&out, "[more lines follow (the answer is at most %d bytes): read on with offset=%d]", maxRead, n)
				return out.String(), nil
			}
			out.WriteString(entry)
			shown++
		}
		if err == io.EOF {
			break
		}
	}
	if shown == 0 && n > 0 {
		return "", fmt.Errorf("offset %d is past the end: the file has %d lines", offset, n)
	}
	return out.String(), nil
}

// readLine reads one line, without its newline (or "\r\n"), keeping at
// most maxLine bytes of it; cut says it had more.
func readLine(br *bufio.Reader) (line []byte, cut bool, err error) {
	for {
		part, err := br.ReadSlice('\n')
		body := part
		if err == nil {
			body = part[:len(part)-1] // the newline
		}
		if room := maxLine - len(line); len(body) > room {
			body, cut = body[:room], true
		}
		line = append(line, body...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == nil && !cut:
			line = bytes.TrimSuffix(line, []byte("\r"))
		}
		return line, cut, err
	}
}

// listDirArgs are list_dir's arguments.
type listDirArgs struct {
	Path string `json:"path,omitempty" jsonschema:"directory, relative to the session directory"`
}

type listDir struct{ takes[listDirArgs] }

func (t listDir) Spec() Spec {
	return Spec{Name: "list_dir", Guide: "See what a directory holds with list_dir.",
		Description: "List a directory (default: the session directory). Directories end in /.",
		Schema:      t.schema()}
}
func (listDir) Asks() bool   { return false }
func (listDir) Kind() string { return protocol.KindRead }
func (t listDir) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "List " + a.Path
}
func (t listDir) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	pl, err := openPlace(env)
	if err != nil {
		return errorf("%v", err)
	}
	defer pl.close()
	name, err := pl.name(a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	d, err := pl.openFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return errorf("%v", pl.explain(a.Path, err))
	}
	defer d.Close()
	ents, err := d.ReadDir(maxEntries)
	if err != nil && !errors.Is(err, io.EOF) {
		return errorf("%v", pl.explain(a.Path, err))
	}
	slices.SortFunc(ents, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
	var b strings.Builder
	for _, e := range ents {
		b.WriteString(e.Name())
		if e.IsDir() {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	if len(ents) == maxEntries {
		more := 0 // count the rest without keeping them
		for {
			rest, err := d.ReadDir(1024)
			more += len(rest)
			if err != nil || len(rest) == 0 {
				break
			}
		}
		if more > 0 {
			fmt.Fprintf(&b, "[%d more entries not shown]\n", more)
		}
	}
	if len(ents) == 0 {
		return Result{Output: "(empty directory)"}
	}
	return Result{Output: strings.TrimSuffix(b.String(), "\n")}
}

// searchArgs are search's arguments.
type searchArgs struct {
	Pattern    string `json:"pattern" jsonschema:"regular expression"`
	Path       string `json:"path,omitempty" jsonschema:"file or directory to search, relative to the session directory"`
	Glob       string `json:"glob,omitempty" jsonschema:"only files matching this pattern: a name pattern (*.go) or, with a /, a path pattern under path (src/**/*.ts)"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
	Context    int    `json:"context,omitempty" schema:"minimum=0,maximum=10" jsonschema:"lines shown before and after each match"`
}

type search struct{ takes[searchArgs] }

func (t search) Spec() Spec {
	return Spec{Name: "search", Guide: "Find where something is defined or used with search (a regular expression) instead of guessing.",
		Description: "Search files for a regular expression (Go syntax); prints file:line: text for each match, at most 200, with context lines as file-line- text. Skips what .gitignore ignores.",
		Schema:      t.schema()}
}
func (search) Asks() bool   { return false }
func (search) Kind() string { return protocol.KindSearch }
func (t search) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Search for " + a.Pattern
}
func (t search) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if a.Pattern == "" {
		return errorf("pattern is required")
	}
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return errorf("pattern: %v", err)
	}
	if a.Context < 0 || a.Context > 10 {
		return errorf("context is a number of lines from 0 to 10 (got %d)", a.Context)
	}
	filter := filepath.ToSlash(a.Glob)
	if filter != "" && !doublestar.ValidatePattern(filter) {
		return errorf("glob %q is not a valid pattern", a.Glob)
	}
	pl, start, _, err := placeAt(env, a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	defer pl.close()
	s := &searcher{re: re, context: a.Context}
	walkErr := walkFiles(ctx, env, pl, start, func(name, rel, under string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil // FIFOs, devices, sockets, symlinks: never opened
		}
		if filter != "" {
			against := under
			if !strings.Contains(filter, "/") {
				against = path.Base(rel)
			}
			if ok, _ := doublestar.Match(filter, against); !ok {
				return nil
			}
		}
		if s.total >= searchTotalBytes {
			s.full = true
			return filepath.SkipAll
		}
		f, _, err := pl.openRegular(name)
		if err != nil {
			return nil
		}
		defer f.Close()
		if !s.file(f, rel) {
			return filepath.SkipAll
		}
		return nil
	})
	if walkErr != nil {
		return errorf("%v", walkErr)
	}
	return Result{Output: s.result()}
}

// searcher is one search's state: matches so far and bytes read.
type searcher struct {
	re       *regexp.Regexp
	context  int // lines shown around each match
	out      []string
	matches  int
	total    int
	full     bool // stopped: too many matches or bytes
	cutFiles int
}

// shown is a line as search prints it: cut to 300 bytes.
func shown(line []byte) string {
	text := strings.TrimRight(string(line[:min(len(line), 400)]), "\r\n")
	if len(text) > 300 {
		text = text[:300] + "..."
	}
	return text
}

// file searches one open regular file (skipping a binary one); false
// means the search is over. Context lines print as file-N- text, and
// "--" parts groups that do not touch, as grep prints them.
func (s *searcher) file(f *os.File, rel string) bool {
	br := bufio.NewReaderSize(io.LimitReader(f, int64(min(searchFileBytes, searchTotalBytes-s.total))), 64<<10)
	if head, _ := br.Peek(8000); bytes.IndexByte(head, 0) >= 0 {
		return true // binary
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > searchFileBytes {
		s.cutFiles++
	}
	type held struct {
		n    int
		text string
	}
	var before []held // the last context lines not printed
	printed, after := 0, 0
	emit := func(n int, sep, text string) {
		if s.context > 0 && printed > 0 && n > printed+1 {
			s.out = append(s.out, "--")
		}
		s.out = append(s.out, fmt.Sprintf("%s%s%d%s %s", rel, sep, n, sep, text))
		printed = n
	}
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		s.total += len(line)
		for errors.Is(err, bufio.ErrBufferFull) { // a very long line: match its start
			var rest []byte
			rest, err = br.ReadSlice('\n')
			s.total += len(rest)
		}
		if len(line) > 0 {
			switch {
			case s.re.Match(line):
				if s.matches == maxMatches {
					s.full = true
					return false
				}
				s.matches++
				for _, h := range before {
					emit(h.n, "-", h.text)
				}
				before = before[:0]
				emit(n, ":", shown(line))
				after = s.context
			case after > 0:
				emit(n, "-", shown(line))
				after--
			case s.context > 0:
				if len(before) == s.context {
					before = append(before[:0], before[1:]...)
				}
				before = append(before, held{n, shown(line)})
			}
		}
		if err != nil {
			return true
		}
	}
}

func (s *searcher) result() string {
	out := s.out
	if s.matches == 0 {
		out = []string{"no matches"}
	}
	if s.cutFiles > 0 {
		out = append(out, fmt.Sprintf("[%d files over %d bytes were searched in their first %d bytes only]", s.cutFiles, searchFileBytes, searchFileBytes))
	}
	switch {
	case s.full && s.matches == maxMatches:
		out = append(out, fmt.Sprintf("[stopped after %d matches]", maxMatches))
	case s.full:
		out = append(out, fmt.Sprintf("[stopped after reading %d bytes]", searchTotalBytes))
	}
	return strings.Join(out, "\n")
}

// writeFileArgs are write_file's arguments: content is told apart from
// none given (an empty file is written; a call without it is refused).
type writeFileArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

type writeFile struct{ takes[writeFileArgs] }

func (t writeFile) Spec() Spec {
	return Spec{Name: "write_file", Guide: "Write a new file, or the whole of one, with write_file.",
		Description: "Write a file (creating it and its directories, replacing it if it exists).",
		Schema:      t.schema()}
}
func (writeFile) Asks() bool   { return true }
func (writeFile) Kind() string { return protocol.KindEdit }
func (t writeFile) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	n := 0
	if a.Content != nil {
		n = len(*a.Content)
	}
	return fmt.Sprintf("Write %s (%d bytes)", a.Path, n)
}
func (t writeFile) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if a.Path == "" || a.Content == nil {
		return errorf("path and content are required")
	}
	pl, err := openPlace(env)
	if err != nil {
		return errorf("%v", err)
	}
	defer pl.close()
	name, err := pl.name(a.Path)
	if err == nil {
		name, err = pl.target(name)
	}
	if err != nil {
		return errorf("%v", pl.explain(a.Path, err))
	}
	if write := env.clientWrite(); write != nil {
		if err := write(ctx, pl.abs(name), *a.Content); err != nil {
			return errorf("%s: %v", a.Path, err)
		}
		return Result{Output: fmt.Sprintf("wrote %d bytes to %s", len(*a.Content), a.Path)}
	}
	if err := pl.mkdirAll(filepath.Dir(name)); err != nil {
		return errorf("%v", pl.explain(a.Path, err))
	}
	if err := pl.replace(name, []byte(*a.Content)); err != nil {
		return errorf("%v", pl.explain(a.Path, err))
	}
	return Result{Output: fmt.Sprintf("wrote %d bytes to %s", len(*a.Content), a.Path)}
}

// replace writes data to name atomically (a temporary file beside it,
// then a rename), keeping an existing file's mode.
func (p *place) replace(name string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := p.stat(name); err == nil {
		mode = fi.Mode().Perm()
	}
	var tmp string
	var f *os.File
	for range 10 {
		tmp = filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp"+randomSuffix())
		var err error
		if f, err = p.openFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			break
		} else if !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	if f == nil {
		return errors.New("cannot create a temporary file")
	}
	ok := false
	defer func() {
		if !ok {
			p.remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := p.rename(tmp, name); err != nil {
		return err
	}
	ok = true
	return nil
}

func randomSuffix() string { return protocol.NewID("", 6) }

// editFileArgs are edit_file's arguments: new is told apart from none
// given (an empty new deletes old; a call without it is refused).
type editFileArgs struct {
	Path       string  `json:"path"`
	Old        string  `json:"old" jsonschema:"exact text to replace; must occur exactly once unless replace_all"`
	New        *string `json:"new"`
	ReplaceAll bool    `json:"replace_all,omitempty" jsonschema:"replace every occurrence"`
}

type editFile struct{ takes[editFileArgs] }

func (t editFile) Spec() Spec {
	return Spec{Name: "edit_file", Guide: "Change a file in place with edit_file (not by redirecting a command's output); keep the project's style.",
		Description: "Replace the one exact occurrence of old with new in a file (every occurrence with replace_all).",
		Schema:      t.schema()}
}
func (editFile) Asks() bool   { return true }
func (editFile) Kind() string { return protocol.KindEdit }
func (t editFile) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Edit " + a.Path
}
func (t editFile) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if a.Path == "" || a.Old == "" || a.New == nil {
		return errorf("path, old and new are required (old must not be empty)")
	}
	return editRun(ctx, env, a.Path, []edit{{Old: a.Old, New: a.New, ReplaceAll: a.ReplaceAll}})
}

// multiEditArgs are multi_edit's arguments.
type multiEditArgs struct {
	Path  string `json:"path"`
	Edits []edit `json:"edits" schema:"minItems=1"`
}

type multiEdit struct{ takes[multiEditArgs] }

func (t multiEdit) Spec() Spec {
	return Spec{Name: "multi_edit", Guide: "Make several changes to one file at once with multi_edit.",
		Description: "Apply several exact-text edits to one file, in order, atomically: all of them or, when one fails, none.",
		Schema:      t.schema()}
}
func (multiEdit) Asks() bool   { return true }
func (multiEdit) Kind() string { return protocol.KindEdit }
func (t multiEdit) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Edit " + a.Path
}
func (t multiEdit) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if a.Path == "" || len(a.Edits) == 0 {
		return errorf("path and at least one edit are required")
	}
	for i, e := range a.Edits {
		if e.Old == "" || e.New == nil {
			return errorf("edit %d: old and new are required (old must not be empty); nothing was changed", i+1)
		}
	}
	return editRun(ctx, env, a.Path, a.Edits)
}

// edit is one exact-text replacement: an entry of multi_edit's edits,
// as the model writes it (edit_file's arguments make one too).
type edit struct {
	Old        string  `json:"old" jsonschema:"exact text to replace (in the file as the edits before left it); must occur exactly once unless replace_all"`
	New        *string `json:"new"`
	ReplaceAll bool    `json:"replace_all,omitempty"`
}

// applyEdits applies edits to text in order, each to what the ones
// before left; the first that cannot apply fails them all. It returns
// the number of replacements made.
func applyEdits(text, path string, edits []edit) (string, int, error) {
	total := 0
	for i, e := range edits {
		where := ""
		if len(edits) > 1 {
			where = fmt.Sprintf("edit %d: ", i+1)
		}
		n := strings.Count(text, e.Old)
		switch {
		case n == 0:
			return "", 0, fmt.Errorf("%sold text not found in %s", where, path)
		case n > 1 && !e.ReplaceAll:
			return "", 0, fmt.Errorf("%sold text occurs %d times in %s; give more context so it is unique, or set replace_all", where, n, path)
		}
		if !e.ReplaceAll {
			n = 1
		}
		text = strings.Replace(text, e.Old, *e.New, n)
		total += n
	}
	return text, total, nil
}

// editRun applies edits to the file at path and writes it back in one
// atomic replace (or one client write): all the edits or none.
func editRun(ctx context.Context, env *Env, path string, edits []edit) Result {
	pl, err := openPlace(env)
	if err != nil {
		return errorf("%v", err)
	}
	defer pl.close()
	name, err := pl.name(path)
	if err == nil {
		name, err = pl.target(name)
	}
	if err != nil {
		return errorf("%v", pl.explain(path, err))
	}
	var data []byte
	var more bool
	if read := env.clientRead(); read != nil {
		text, err := read(ctx, pl.abs(name))
		if err != nil {
			return errorf("%s: %v", path, err)
		}
		data, more = []byte(text), len(text) > maxEdit
	} else {
		f, _, err := pl.openRegular(name)
		if err != nil {
			return errorf("%v", pl.explain(path, err))
		}
		data, more, err = readAll(ctx, f, maxEdit)
		f.Close()
		if err != nil {
			return errorf("%s: %v", path, err)
		}
	}
	if more {
		return errorf("%s is over %d bytes: too big to edit", path, maxEdit)
	}
	edited, n, err := applyEdits(string(data), path, edits)
	if err != nil {
		if len(edits) > 1 {
			return errorf("%v; nothing was changed", err)
		}
		return errorf("%v", err)
	}
	done := "edited " + path
	if n > 1 {
		done += fmt.Sprintf(" (%d replacements)", n)
	}
	if write := env.clientWrite(); write != nil {
		if err := write(ctx, pl.abs(name), edited); err != nil {
			return errorf("%s: %v", path, err)
		}
		return Result{Output: done}
	}
	if err := pl.replace(name, []byte(edited)); err != nil {
		return errorf("%v", pl.explain(path, err))
	}
	return Result{Output: done}
}
