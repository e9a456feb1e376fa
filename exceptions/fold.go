package exceptions

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxPatternBytes bounds a folded message: longer ones are cut and end in
// "…" (a message that embeds a whole document would otherwise be one
// pattern per document).
const MaxPatternBytes = 200

// Fold appends to dst the pattern of a message given as UTF-16LE bytes
// (its NUL, if any, ends it): GUIDs become <guid>, 0x-prefixed and long
// hexadecimal words <hex>, numbers <n> (with their separators: 1,234.5
// and 12:30:01 are one <n>), and words that mix letters with at least
// four digits <id>. It works on the caller's buffer and allocates nothing
// once dst has grown to a message's size.
func Fold(dst, msg []byte) []byte {
	// Decode into runes on the fly: the message is read once.
	n := len(msg) / 2
	at := func(i int) rune {
		if i >= n {
			return 0
		}
		return rune(msg[2*i]) | rune(msg[2*i+1])<<8
	}
	start := len(dst)
	for i := 0; i < n; {
		if len(dst)-start >= MaxPatternBytes {
			dst = append(dst, "…"...)
			break
		}
		r := at(i)
		if r == 0 {
			break
		}
		if !isWord(r) {
			i++
			if utf16.IsSurrogate(r) {
				if r2 := at(i); utf16.IsSurrogate(r2) {
					r = utf16.DecodeRune(r, r2)
					i++
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		}
		// A word: letters, digits and underscores.
		j := i
		digits, letters, hex := 0, 0, true
		for j < n {
			c := at(j)
			if !isWord(c) {
				break
			}
			switch {
			case c >= '0' && c <= '9':
				digits++
			default:
				letters++
				if !isHex(c) {
					hex = false
				}
			}
			j++
		}
		if isGUID(at, i, n) {
			dst = append(dst, "<guid>"...)
			i += 36
			continue
		}
		switch {
		case letters == 0:
			// A number, with its separators between digits.
			for j+1 < n && (at(j) == '.' || at(j) == ',' || at(j) == ':') && isDigit(at(j+1)) {
				j++
				for j < n && isDigit(at(j)) {
					j++
				}
			}
			dst = append(dst, "<n>"...)
		case j-i > 2 && at(i) == '0' && (at(i+1) == 'x' || at(i+1) == 'X') && allHex(at, i+2, j):
			dst = append(dst, "<hex>"...)
		case hex && digits > 0 && j-i >= 8:
			dst = append(dst, "<hex>"...)
		case digits >= 4:
			dst = append(dst, "<id>"...)
		default:
			for k := i; k < j; k++ {
				dst = utf8.AppendRune(dst, at(k))
			}
		}
		i = j
	}
	return dst
}

func isWord(r rune) bool {
	return r == '_' || (r < 0x80 && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')) ||
		(r >= 0x80 && !utf16.IsSurrogate(r) && (unicode.IsLetter(r) || unicode.IsDigit(r)))
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isHex(r rune) bool { return isDigit(r) || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F' }

func allHex(at func(int) rune, i, j int) bool {
	for k := i; k < j; k++ {
		if !isHex(at(k)) {
			return false
		}
	}
	return true
}

// isGUID reports whether the 36 characters at i are a GUID's
// 8-4-4-4-12 hexadecimal groups.
func isGUID(at func(int) rune, i, n int) bool {
	if i+36 > n {
		return false
	}
	for k := 0; k < 36; k++ {
		c := at(i + k)
		if k == 8 || k == 13 || k == 18 || k == 23 {
			if c != '-' {
				return false
			}
		} else if !isHex(c) {
			return false
		}
	}
	return i+36 == n || !isWord(at(i+36))
}
