package report

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/net/html"

	"github.com/dstein/dstein/internal/safeio"
)

// CheckPage checks the links of the HTML page at path: every src and href
// (and srcset, and url() in styles) that is not a fragment must be a
// relative path to a file that exists beside the page (an image's must be a
// regular file), every fragment (#id) must name an element of the page, and
// nothing may be remote (http:, https:, //host) or another scheme (data:,
// javascript:, file:). It reports every problem it finds.
func CheckPage(path string) error {
	b, err := safeio.ReadFile(path, "page", maxTextFile)
	if err != nil {
		return err
	}
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	type ref struct{ where, value string }
	var refs []ref
	ids := map[string]bool{}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				where := fmt.Sprintf("<%s %s>", n.Data, a.Key)
				switch a.Key {
				case "id":
					ids[a.Val] = true
				case "src", "href", "poster", "data", "action", "formaction", "background":
					refs = append(refs, ref{where, a.Val})
				case "srcset", "imagesrcset":
					for c := range strings.SplitSeq(a.Val, ",") {
						if f := strings.Fields(c); len(f) > 0 {
							refs = append(refs, ref{where, f[0]})
						}
					}
				case "style":
					for _, u := range cssURLs(a.Val) {
						refs = append(refs, ref{where, u})
					}
				}
			}
			if n.Data == "style" {
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.TextNode {
						for _, u := range cssURLs(c.Data) {
							refs = append(refs, ref{"<style>", u})
						}
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	dir := filepath.Dir(path)
	var errs []error
	for _, r := range refs {
		if err := checkRef(dir, r.where, r.value, ids); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s has broken or remote links:\n%w", path, errors.Join(errs...))
	}
	return nil
}

var cssURL = regexp.MustCompile(`(?i)url\(\s*['"]?([^'")\s]*)|@import\s+['"]([^'"]*)`)

// cssURLs finds the addresses in url(…) and @import "…" of a style sheet.
func cssURLs(css string) []string {
	var us []string
	for _, m := range cssURL.FindAllStringSubmatch(css, -1) {
		us = append(us, m[1]+m[2])
	}
	return us
}

func checkRef(dir, where, v string, ids map[string]bool) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return fmt.Errorf("%s is empty", where)
	}
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Errorf("%s=%q is not a valid address: %v", where, v, err)
	}
	switch s := strings.ToLower(u.Scheme); {
	case s == "http" || s == "https" || u.Host != "" || strings.HasPrefix(v, "//"):
		return fmt.Errorf("%s=%q is remote; the page must work offline", where, v)
	case s != "":
		return fmt.Errorf("%s=%q is a %s: address; want a path relative to the page", where, v, s)
	case u.Path == "" && u.RawQuery == "":
		if u.Fragment == "" || !ids[u.Fragment] {
			return fmt.Errorf("%s=%q names no element of the page", where, v)
		}
		return nil
	case strings.HasPrefix(u.Path, "/"):
		return fmt.Errorf("%s=%q is an absolute path; want one relative to the page", where, v)
	}
	p := filepath.Join(dir, filepath.FromSlash(u.Path))
	info, err := os.Stat(p)
	switch {
	case err != nil:
		return fmt.Errorf("%s=%q: %s does not exist", where, v, p)
	case strings.HasPrefix(where, "<img") && !info.Mode().IsRegular():
		return fmt.Errorf("%s=%q: %s is not a file", where, v, p)
	}
	return nil
}
