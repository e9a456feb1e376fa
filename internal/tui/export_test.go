package tui

// Test hooks.

// MinWidth and MinHeight are the smallest terminal the layout fits
// without clipping.
const MinWidth, MinHeight = minWidth, minHeight

// FrameLines are the frame's lines before View clips them to the
// terminal.
func (m *Model) FrameLines() []string {
	s, h := m.shown()
	_, lines := m.frame(s, h, m.frozen)
	return lines
}
