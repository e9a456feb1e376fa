package exceptions

import (
	"testing"

	"github.com/clrspy/clrspy/stacks"
)

// TestSiteGenerated: a throw whose first application frame is a
// runtime-generated method (a minimal API's compiled request delegate)
// is named by what calls it; an application frame keeps its name.
func TestSiteGenerated(t *testing.T) {
	m := func(name, mod string) stacks.Frame {
		return stacks.Frame{Kind: stacks.KindManaged, Name: name, Module: mod}
	}
	fs := []stacks.Frame{
		m("System.Runtime.EH.DispatchEx(value class System.Runtime.StackFrameIterator&,value class ExInfo&)", "System.Private.CoreLib.dll"),
		m("dynamicClass.lambda_method2(pMT: [ClassLoader.Closure],class Microsoft.AspNetCore.Http.HttpContext)", ""),
		m("Microsoft.AspNetCore.Routing.EndpointMiddleware.Invoke(class Microsoft.AspNetCore.Http.HttpContext)", "Microsoft.AspNetCore.Routing.dll"),
	}
	want := "dynamicClass.lambda_method2(pMT: [ClassLoader.Closure],class Microsoft.AspNetCore.Http.HttpContext) [runtime-generated, called by Microsoft.AspNetCore.Routing.EndpointMiddleware.Invoke(class Microsoft.AspNetCore.Http.HttpContext)]"
	if got := Site(fs); got != want {
		t.Errorf("site %q, want %q", got, want)
	}
	fs[1] = m("Shop.Orders.Validate(int32)", "Shop.dll")
	if got := Site(fs); got != "Shop.Orders.Validate(int32)" {
		t.Errorf("site %q", got)
	}
}
