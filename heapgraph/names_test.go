package heapgraph

import (
	"slices"
	"testing"

	"github.com/clrspy/clrspy/clrmeta"
)

// TestStaticNames: a field one class declares is that class's; of
// several, the one declared with the object's type; still several (a
// closure class's <>9 in every <>c), the one the runtime's order puts
// between the statics resolved around it; otherwise the field alone.
func TestStaticNames(t *testing.T) {
	const mod, other = "/app/App.dll", "/app/Lib.dll"
	b := &Builder{typeOf: map[uint64]uint32{1: 0, 2: 1}, typeNames: []string{"App.Cache", "<>c"}, known: map[uint64]string{}}
	b.statics = []staticRoot{
		{obj: 1, typeID: 1, field: "Items"},    // one class
		{obj: 2, typeID: 1, field: "Instance"}, // two classes, one with the object's type
		{obj: 3, typeID: 2, field: "<>9"},      // two <>c classes: by order
		{obj: 4, typeID: 1, field: "Last"},
		{obj: 5, typeID: 2, field: "<>9"}, // after the last resolved one: unknown
		{obj: 6, typeID: 1, field: "Unknown"},
	}
	b.modules = map[uint64]string{1: mod, 2: other} // Lib.dll declares none of them
	b.NameStatics(func(path string, want map[string]bool) ([]clrmeta.StaticField, error) {
		if path != mod {
			return nil, nil
		}
		return []clrmeta.StaticField{
			{Class: "App.Store", Field: "Items", FieldType: "App.Cache", Reference: true, Module: mod, Order: 3},
			{Class: "App.Store", Field: "Instance", FieldType: "App.Store", Reference: true, Module: mod, Order: 4},
			{Class: "App.Other", Field: "Instance", FieldType: "App.Cache", Reference: true, Module: mod, Order: 5},
			{Class: "App.Store+<>c", Field: "<>9", FieldType: "App.Store+<>c", Reference: true, Module: mod, Order: 6},
			{Class: "App.Z+<>c", Field: "<>9", FieldType: "App.Z+<>c", Reference: true, Module: mod, Order: 9},
			{Class: "App.Y", Field: "Last", FieldType: "App.Cache", Reference: true, Module: mod, Order: 8},
			{Class: "App.Y", Field: "Count", FieldType: "", Reference: false, Module: mod, Order: 10},
		}, nil
	})
	got := b.staticNames()
	want := []string{"App.Store.Items", "App.Other.Instance", "App.Store+<>c.<>9", "App.Y.Last", "<>9", "Unknown"}
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}
