package tui

import "github.com/charmbracelet/lipgloss"

// styles are the frame's colors, bound to one renderer (so a frame for a
// file or a test has none, whatever the process's own terminal is).
type styles struct {
	plain, dim, bold, key, reverse lipgloss.Style
	title, section                 lipgloss.Style
	info, warn, slow               lipgloss.Style
	banner, frozen                 lipgloss.Style
}

func newStyles(r *lipgloss.Renderer) styles {
	n := r.NewStyle
	return styles{
		plain:   n(),
		dim:     n().Foreground(lipgloss.Color("244")),
		bold:    n().Bold(true),
		key:     n().Bold(true).Foreground(lipgloss.Color("14")),
		reverse: n().Reverse(true),
		title:   n().Reverse(true).Bold(true),
		section: n().Bold(true).Foreground(lipgloss.Color("14")),
		// clrspy gc's pause log: Info yellow, Warn red.
		info:   n().Foreground(lipgloss.Color("11")),
		warn:   n().Foreground(lipgloss.Color("9")).Bold(true),
		slow:   n().Foreground(lipgloss.Color("13")).Bold(true),
		banner: n().Reverse(true).Bold(true).Foreground(lipgloss.Color("9")),
		frozen: n().Reverse(true).Bold(true).Foreground(lipgloss.Color("11")),
	}
}

// severity is the style of a pause's level.
func (s *styles) severity(level string) lipgloss.Style {
	switch level {
	case "warn":
		return s.warn
	case "info":
		return s.info
	}
	return s.plain
}
