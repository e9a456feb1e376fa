package stacks

import "strings"

// RuntimeGenerated reports a method the runtime generated rather than
// loaded from a module: a compiled expression or a DynamicMethod (LINQ's
// Compile, ASP.NET Core's action and endpoint invokers), which the runtime
// names dynamicClass.lambda_method2 and which names nothing in the
// application; a site that is one is named by what calls it.
func RuntimeGenerated(name string) bool {
	return strings.HasPrefix(name, "dynamicClass.") || strings.HasPrefix(name, "DynamicClass.")
}
