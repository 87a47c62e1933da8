package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	// mdFence is a fenced code block; mdCode an inline code span; mdComment
	// an HTML comment. Links in them are not links.
	mdFence   = regexp.MustCompile("(?ms)^```.*?^```[^\n]*$")
	mdCode    = regexp.MustCompile("`[^`\n]*`")
	mdComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	// mdLink is an inline link or image: its target, then an optional title.
	mdLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	// mdHeading is an ATX heading; mdAnchor an explicit HTML anchor.
	mdHeading = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)
	mdAnchor  = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)
)

// markdownPages are the pages TestDocLinks checks, relative to the module
// root: the README, every page of docs/, and the benchmark's README.
func markdownPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../README.md", "../bench/README.md"}, pages...)
}

// TestDocLinks fails on a relative link in the README or a page of docs/
// that points at no file, or at a heading its page does not have, and on a
// file of docs/ that the index, docs/README.md, does not link.
func TestDocLinks(t *testing.T) {
	anchors := map[string]map[string]bool{} // page -> its anchors
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(text))
		anchors[page] = a
		return a
	}

	linked := map[string]bool{} // what docs/README.md links
	for _, page := range markdownPages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		prose := mdComment.ReplaceAllString(mdFence.ReplaceAllString(string(text), ""), "")
		prose = mdCode.ReplaceAllString(prose, "")
		name := strings.TrimPrefix(page, "../")
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s links %s, which does not exist", name, target)
				continue
			}
			if name == "docs/README.md" {
				linked[filepath.Clean(file)] = true
			}
			if anchor != "" {
				if !strings.HasSuffix(file, ".md") {
					t.Errorf("%s links %s: an anchor in a file that is not markdown", name, target)
				} else if !anchorsOf(file)[anchor] {
					t.Errorf("%s links %s, but %s has no heading with the anchor #%s", name, target, strings.TrimPrefix(filepath.ToSlash(file), "../"), anchor)
				}
			}
		}
	}

	entries, err := os.ReadDir("../docs")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		file := filepath.Join("../docs", e.Name())
		if e.Name() != "README.md" && !e.IsDir() && !linked[file] {
			t.Errorf("docs/README.md, the index, does not link docs/%s", e.Name())
		}
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a
// markdown page (lower case, punctuation dropped, spaces as hyphens, a
// repeated one numbered), and its explicit <a id> anchors.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	for _, m := range mdAnchor.FindAllStringSubmatch(text, -1) {
		anchors[m[1]] = true
	}
	seen := map[string]int{}
	for _, m := range mdHeading.FindAllStringSubmatch(mdFence.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}
