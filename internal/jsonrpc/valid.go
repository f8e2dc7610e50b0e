package jsonrpc

// validJSON reports whether b is one JSON value, exactly as json.Valid
// does (strings are not checked for UTF-8, nesting is bounded at
// encoding/json's 10,000), in one pass over the bytes without
// encoding/json's per-byte state machine: every frame is checked before
// it is read, and json.Valid was half of reading a small one. A test
// and a fuzz target hold it to json.Valid.
func validJSON(b []byte) bool {
	var buf [32]byte
	stack := buf[:0] // the open containers, '{' or '['
	i := 0
value:
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) == maxNesting {
				return false
			}
			stack = append(stack, c)
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' and ']' are '{' and '[' plus 2
				i++
				stack = stack[:len(stack)-1]
				break // an empty container: a value ended
			}
			if c == '{' {
				if i = objectKey(b, i); i < 0 {
					return false
				}
			}
			continue value
		case '"':
			if i = skipValidString(b, i); i < 0 {
				return false
			}
		case 't':
			if i = literal(b, i, "true"); i < 0 {
				return false
			}
		case 'f':
			if i = literal(b, i, "false"); i < 0 {
				return false
			}
		case 'n':
			if i = literal(b, i, "null"); i < 0 {
				return false
			}
		default:
			if i = skipValidNumber(b, i); i < 0 {
				return false
			}
		}
		// A value ended: what may follow it.
		for {
			i = skipSpace(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[len(stack)-1]
			switch b[i] {
			case ',':
				i++
				if top == '{' {
					if i = objectKey(b, skipSpace(b, i)); i < 0 {
						return false
					}
				}
				continue value
			case top + 2:
				i++
				stack = stack[:len(stack)-1]
			default:
				return false
			}
		}
	}
}

// maxNesting is encoding/json's bound on nested containers.
const maxNesting = 10000

// objectKey checks a member's name and its colon at b[i]; the index
// after the colon, or -1.
func objectKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = skipValidString(b, i); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return i + 1
}

// skipValidString checks the string at b[i] == '"'; the index after it,
// or -1.
func skipValidString(b []byte, i int) int {
	for i++; i < len(b); {
		c := b[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+5 >= len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return -1
				}
				i += 6
			default:
				return -1
			}
		}
	}
	return -1
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipValidNumber checks the number at b[i]; the index after it, or -1.
func skipValidNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i
}

// literal checks that b[i:] starts with word; the index after it, or -1.
func literal(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}
