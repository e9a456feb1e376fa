package requests

import "strings"

// Route folds a request path into its route: the query is dropped and
// every segment that is an id becomes a placeholder: {n} for a number,
// {guid} for a GUID, {id} for a long hexadecimal word or a word that mixes
// letters with at least four digits ("/orders/42/items/7f3a9c21" reads
// "/orders/{n}/items/{id}"). Other segments stay as they are.
func Route(path string) string {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if path == "" {
		return "/"
	}
	if !needsFold(path) {
		return path
	}
	var b strings.Builder
	b.Grow(len(path))
	for i, seg := range strings.Split(path, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(foldSegment(seg))
	}
	return b.String()
}

func needsFold(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] >= '0' && p[i] <= '9' {
			return true
		}
	}
	return false
}

func foldSegment(s string) string {
	if s == "" {
		return s
	}
	digits, hex, other := 0, 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			hex++
		case c == '-' || c == '_' || c == '.':
		default:
			other++
		}
	}
	switch {
	case digits == 0:
		return s
	case digits == len(s):
		return "{n}"
	case isGUID(s):
		return "{guid}"
	case other == 0 && len(s) >= 8:
		return "{id}"
	case digits >= 4:
		return "{id}"
	}
	return s
}

func isGUID(s string) bool {
	s = strings.Trim(s, "{}")
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
