package talk

import "testing"

// The chat knows the background without asking the terminal: from
// COLORFGBG where it is set, dark otherwise.
func TestDarkBackground(t *testing.T) {
	for _, tc := range []struct {
		colorfgbg string
		want      bool
	}{
		{"", true},
		{"15;0", true},
		{"0;15", false},
		{"0;7", false},
		{"15;default;0", true},
		{"7;8", false},
		{"15;6", true},
		{"garbage", true},
		{"0;x", true},
	} {
		getenv := func(k string) string {
			if k == "COLORFGBG" {
				return tc.colorfgbg
			}
			return ""
		}
		if got := darkBackground(getenv); got != tc.want {
			t.Errorf("COLORFGBG=%q: dark %v, want %v", tc.colorfgbg, got, tc.want)
		}
	}
}
