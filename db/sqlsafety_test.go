package db_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/printer"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The store's SQL is built only from fixed fragments: the query text of
// every call that runs or prepares SQL is made of constants, of values
// chosen among constants (map lookups, switches, closures called with
// constants), and of numbers; request values reach SQLite only as ?
// parameters. The test type-checks each package's source and follows each
// query argument back through variables, struct fields, function
// parameters (to every call site) and results (to every return). It covers
// the store and the dataset generators beside it, the only other package
// with SQL.
func TestSQLBuiltFromConstants(t *testing.T) {
	for _, p := range []struct {
		dir string
		// min is how many calls that run SQL the check must find: a check
		// that finds few proves nothing.
		min int
		// dynamic names functions that build their query at run time, which
		// the check must reach.
		dynamic []string
		// exempt names the functions whose SQL is not constant, and why
		// that is safe. One listed here that no longer needs it fails.
		exempt map[string]string
	}{
		{".", 70, []string{"paginateFrom", "findCursor", "findFile", "UpdateTask", "findRole", "KnownFileIDs"}, nil},
		{"seed", 4, []string{"exec"}, map[string]string{
			"dropTaskSchema": "drops the tasks table's indexes and triggers by the names sqlite_schema gives, for acctapi seed",
			"Generate":       "replays the tasks table's own CREATE statements from sqlite_schema, written by our migrations",
		}},
	} {
		t.Run(p.dir, func(t *testing.T) {
			c := loadSQLCheck(t, p.dir, p.exempt)
			sinks := c.sinks()
			for _, s := range sinks {
				if why := c.expr(s.query); why != "" {
					t.Errorf("%s: the query of %s is not built from constants:\n\t%s", c.pos(s.call), s.name, why)
				}
			}
			if len(sinks) < p.min {
				t.Errorf("found %d calls that run SQL, want %d or more", len(sinks), p.min)
			}
			for _, fn := range p.dynamic {
				if !slices.ContainsFunc(sinks, func(s sqlSink) bool { return s.fn == fn }) {
					t.Errorf("no SQL call found in %s, which builds its query at run time", fn)
				}
			}
			for fn, why := range p.exempt {
				if !c.exemptNeeded[fn] {
					t.Errorf("%s is exempt (%s) but builds its SQL from constants: drop the exemption", fn, why)
				}
			}
		})
	}
}

// sqlTrusted are functions of the package whose results are safe in SQL
// whatever they are built from.
var sqlTrusted = map[string]string{
	"NewID": "a cuid: 'c' and base-36 digits (TestNewID)",
}

// sqlCalls are the methods that run or prepare SQL, with the position of
// their query argument.
var sqlCalls = map[string]int{
	"Exec": 0, "Query": 0, "QueryRow": 0, "Prepare": 0,
	"ExecContext": 1, "QueryContext": 1, "QueryRowContext": 1, "PrepareContext": 1,
}

type sqlSink struct {
	call  *ast.CallExpr
	query ast.Expr
	name  string // the method called
	fn    string // the function calling it
}

// sqlCheck is the type-checked package with an index of every place a
// value is written.
type sqlCheck struct {
	fset  *token.FileSet
	files []*ast.File
	pkg   *types.Package
	info  *types.Info

	// writes holds, for each variable and struct field, the expressions
	// written to it; a nil entry is a write the check cannot follow.
	writes map[types.Object][]sqlWrite
	// decls maps functions to their declarations, and variables holding
	// function literals to them.
	decls map[types.Object]*ast.FuncDecl
	lits  map[*types.Var]*ast.FuncLit
	// owner maps each parameter to its function's type and object (nil
	// for a literal) or literal.
	owner map[*types.Var]sqlOwner
	calls []*ast.CallExpr
	// uses counts the uses of each object; calls the ones as callee.
	uses, calleeUses map[types.Object]int

	memo     map[any]string
	visiting map[any]bool
	// exempt are the functions whose SQL may be built at run time;
	// exemptNeeded those of them that do.
	exempt       map[string]string
	exemptNeeded map[string]bool
}

type sqlOwner struct {
	fn    *types.Func
	lit   *ast.FuncLit
	index int
}

// sqlWrite is one value written: an expression, or the index-th value of
// a multi-valued one, or an element of a ranged-over one.
type sqlWrite struct {
	expr  ast.Expr
	index int // -1 unless expr is multi-valued
	rng   bool
}

func loadSQLCheck(t *testing.T, dir string, exempt map[string]string) *sqlCheck {
	t.Helper()
	c := &sqlCheck{
		fset: token.NewFileSet(), writes: map[types.Object][]sqlWrite{}, decls: map[types.Object]*ast.FuncDecl{},
		lits: map[*types.Var]*ast.FuncLit{}, owner: map[*types.Var]sqlOwner{}, uses: map[types.Object]int{},
		calleeUses: map[types.Object]int{}, memo: map[any]string{}, visiting: map[any]bool{}, exemptNeeded: map[string]bool{},
		exempt: exempt,
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(c.fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		c.files = append(c.files, f)
	}
	c.info = &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{Importer: stdOnlyImporter{importer.ForCompiler(c.fset, "source", nil)},
		// Packages outside the standard library are stand-ins: what the
		// store calls in them is not SQL text, so their errors do not matter.
		Error: func(error) {}}
	c.pkg, _ = conf.Check("acctapi/"+filepath.ToSlash(filepath.Join("db", dir)), c.fset, c.files, c.info)
	c.index()
	return c
}

// stdOnlyImporter type-checks the standard library from source and stands
// in empty packages for the rest, acctapi's own included, so that the test
// builds nothing else.
type stdOnlyImporter struct{ std types.Importer }

func (i stdOnlyImporter) Import(path string) (*types.Package, error) {
	if first := strings.Split(path, "/")[0]; !strings.Contains(first, ".") && first != "acctapi" {
		return i.std.Import(path)
	}
	name := filepath.Base(path)
	if strings.HasPrefix(name, "v") && strings.Trim(name[1:], "0123456789") == "" {
		name = filepath.Base(filepath.Dir(path))
	}
	pkg := types.NewPackage(path, name)
	pkg.MarkComplete()
	return pkg, nil
}

func (c *sqlCheck) pos(n ast.Node) string {
	p := c.fset.Position(n.Pos())
	return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
}

func (c *sqlCheck) text(e ast.Node) string {
	var b strings.Builder
	if err := printer.Fprint(&b, c.fset, e); err != nil {
		return "?"
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// index records every write, declaration, parameter and call.
func (c *sqlCheck) index() {
	for _, f := range c.files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				fn := c.info.Defs[n.Name].(*types.Func)
				c.decls[fn] = n
				c.params(n.Type, sqlOwner{fn: fn})
			case *ast.FuncLit:
				c.params(n.Type, sqlOwner{lit: n})
			case *ast.AssignStmt:
				c.assign(n.Lhs, n.Rhs)
			case *ast.ValueSpec:
				lhs := make([]ast.Expr, len(n.Names))
				for i, id := range n.Names {
					lhs[i] = id
				}
				if len(n.Values) > 0 {
					c.assign(lhs, n.Values)
				}
			case *ast.RangeStmt:
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if obj := c.target(e); obj != nil {
						c.writes[obj] = append(c.writes[obj], sqlWrite{expr: n.X, index: -1, rng: true})
					}
				}
			case *ast.UnaryExpr:
				// Written through a pointer: nothing to follow.
				if obj := c.target(n.X); n.Op == token.AND && obj != nil {
					c.writes[obj] = append(c.writes[obj], sqlWrite{index: -1})
				}
			case *ast.CompositeLit:
				c.compositeLit(n)
			case *ast.CallExpr:
				c.calls = append(c.calls, n)
				if obj := c.callee(n); obj != nil {
					c.calleeUses[obj]++
				}
			case *ast.Ident:
				if obj := c.info.Uses[n]; obj != nil {
					c.uses[obj]++
				}
			}
			return true
		})
	}
}

func (c *sqlCheck) params(ft *ast.FuncType, o sqlOwner) {
	i := 0
	for _, field := range ft.Params.List {
		for _, name := range field.Names {
			if v, ok := c.info.Defs[name].(*types.Var); ok {
				o.index = i
				c.owner[v] = o
			}
			i++
		}
		if len(field.Names) == 0 {
			i++
		}
	}
}

func (c *sqlCheck) assign(lhs, rhs []ast.Expr) {
	for i, l := range lhs {
		obj := c.target(l)
		if obj == nil {
			continue
		}
		w := sqlWrite{index: -1}
		if len(rhs) == len(lhs) {
			w.expr = rhs[i]
		} else {
			w.expr, w.index = rhs[0], i
		}
		c.writes[obj] = append(c.writes[obj], w)
		if lit, ok := unparen(w.expr).(*ast.FuncLit); ok && w.index < 0 {
			if v, ok := obj.(*types.Var); ok {
				c.lits[v] = lit
			}
		}
	}
}

// target is the variable or field an expression writes to: m[k] and s[i]
// write to m and s.
func (c *sqlCheck) target(e ast.Expr) types.Object {
	switch e := unparen(e).(type) {
	case *ast.Ident:
		if obj := c.info.Defs[e]; obj != nil {
			return obj
		}
		return c.info.Uses[e]
	case *ast.SelectorExpr:
		if sel, ok := c.info.Selections[e]; ok && sel.Kind() == types.FieldVal {
			return sel.Obj()
		}
		return c.info.Uses[e.Sel]
	case *ast.IndexExpr:
		return c.target(e.X)
	case *ast.StarExpr:
		return c.target(e.X)
	}
	return nil
}

func (c *sqlCheck) compositeLit(n *ast.CompositeLit) {
	t := c.info.Types[n].Type
	if t == nil {
		return
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return
	}
	for i, elt := range n.Elts {
		var field *types.Var
		value := elt
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			for j := range st.NumFields() {
				if st.Field(j).Name() == kv.Key.(*ast.Ident).Name {
					field = st.Field(j)
				}
			}
			value = kv.Value
		} else if i < st.NumFields() {
			field = st.Field(i)
		}
		if field != nil {
			c.writes[field] = append(c.writes[field], sqlWrite{expr: value, index: -1})
		}
	}
}

func (c *sqlCheck) callee(call *ast.CallExpr) types.Object {
	switch fun := unparen(call.Fun).(type) {
	case *ast.Ident:
		return c.info.Uses[fun]
	case *ast.SelectorExpr:
		if sel, ok := c.info.Selections[fun]; ok {
			return sel.Obj()
		}
		return c.info.Uses[fun.Sel]
	case *ast.IndexExpr: // a generic function instantiated explicitly
		return c.target(fun.X)
	}
	return nil
}

// sinks are the calls that run or prepare SQL on a database, transaction,
// connection or anything that stands for one; statements (*sql.Stmt)
// carry no query text.
func (c *sqlCheck) sinks() []sqlSink {
	var out []sqlSink
	for _, f := range c.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			_, exempt := c.exempt[fd.Name.Name]
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				fn, ok := c.callee(call).(*types.Func)
				if !ok {
					return true
				}
				i, named := sqlCalls[fn.Name()]
				recv := fn.Signature().Recv()
				if !named || recv == nil || len(call.Args) <= i || strings.HasSuffix(recv.Type().String(), "database/sql.Stmt") {
					return true
				}
				s := sqlSink{call: call, query: call.Args[i], name: fn.Name(), fn: fd.Name.Name}
				if exempt && c.expr(s.query) != "" {
					c.exemptNeeded[fd.Name.Name] = true
					return true
				}
				out = append(out, s)
				return true
			})
		}
	}
	return out
}

// expr says why e may hold text not built from constants, or "" when it
// cannot.
func (c *sqlCheck) expr(e ast.Expr) string {
	tv := c.info.Types[e]
	if tv.Value != nil || inert(tv.Type) {
		return ""
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.expr(e.X)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return firstReason(c.expr(e.X), c.expr(e.Y))
		}
	case *ast.Ident:
		return c.object(c.info.Uses[e], e)
	case *ast.SelectorExpr:
		if sel, ok := c.info.Selections[e]; ok {
			if sel.Kind() == types.FieldVal {
				return c.object(sel.Obj(), e)
			}
			break
		}
		return c.object(c.info.Uses[e.Sel], e)
	case *ast.IndexExpr:
		return c.expr(e.X)
	case *ast.SliceExpr:
		return c.expr(e.X)
	case *ast.CompositeLit:
		var reasons []string
		for _, elt := range e.Elts {
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				reasons = append(reasons, c.expr(kv.Key), c.expr(kv.Value))
			} else {
				reasons = append(reasons, c.expr(elt))
			}
		}
		return firstReason(reasons...)
	case *ast.CallExpr:
		return c.call(e)
	}
	return fmt.Sprintf("%s: %s", c.pos(e), c.text(e))
}

// inert types carry no text: numbers, booleans, and structs and
// collections of them (a struct's fields are followed where they are read).
func inert(t types.Type) bool {
	switch u := types.Unalias(t).Underlying().(type) {
	case *types.Basic:
		return u.Info()&(types.IsNumeric|types.IsBoolean) != 0 && u.Kind() != types.Byte && u.Kind() != types.Rune
	case *types.Struct:
		return true
	case *types.Pointer:
		return inert(u.Elem())
	case *types.Slice:
		return inert(u.Elem())
	case *types.Array:
		return inert(u.Elem())
	}
	return false
}

func firstReason(reasons ...string) string {
	for _, r := range reasons {
		if r != "" {
			return r
		}
	}
	return ""
}

// object follows a variable or field to every value written to it, and a
// parameter to every call of its function.
func (c *sqlCheck) object(obj types.Object, at ast.Expr) string {
	switch obj := obj.(type) {
	case *types.Const:
		return ""
	case *types.Var:
		if obj.Pkg() != c.pkg {
			return fmt.Sprintf("%s: %s, a variable of another package", c.pos(at), c.text(at))
		}
		if done, ok := c.memo[obj]; ok {
			return done
		}
		if c.visiting[obj] {
			return "" // a cycle adds nothing the other writes do not
		}
		c.visiting[obj] = true
		why := c.variable(obj, at)
		delete(c.visiting, obj)
		c.memo[obj] = why
		return why
	}
	return fmt.Sprintf("%s: %s", c.pos(at), c.text(at))
}

func (c *sqlCheck) variable(v *types.Var, at ast.Expr) string {
	if o, ok := c.owner[v]; ok {
		return c.param(v, o, at)
	}
	if v.Exported() && (v.IsField() || v.Parent() == c.pkg.Scope()) {
		return fmt.Sprintf("%s: %s is exported: code outside the store sets it", c.pos(at), c.text(at))
	}
	for _, w := range c.writes[v] {
		if why := c.write(w); why != "" {
			return fmt.Sprintf("%s: %s, written with %s", c.pos(at), c.text(at), why)
		}
	}
	return ""
}

func (c *sqlCheck) write(w sqlWrite) string {
	switch {
	case w.expr == nil:
		return "a pointer"
	case w.rng:
		return c.expr(w.expr)
	case w.index < 0:
		return c.expr(w.expr)
	}
	switch e := unparen(w.expr).(type) {
	case *ast.IndexExpr: // v, ok := m[k]
		if w.index == 0 {
			return c.expr(e.X)
		}
		return ""
	case *ast.CallExpr:
		return c.results(e, w.index)
	}
	return fmt.Sprintf("%s: value %d of %s", c.pos(w.expr), w.index, c.text(w.expr))
}

// param follows a parameter to the argument of every call of its function.
func (c *sqlCheck) param(v *types.Var, o sqlOwner, at ast.Expr) string {
	var fnObj types.Object
	switch {
	case o.fn != nil:
		fnObj = o.fn
		if o.fn.Exported() && (o.fn.Signature().Recv() == nil || exportedRecv(o.fn)) {
			return fmt.Sprintf("%s: %s, a parameter of %s, which code outside the store calls", c.pos(at), v.Name(), o.fn.Name())
		}
	default:
		for lv, lit := range c.lits {
			if lit == o.lit {
				fnObj = lv
			}
		}
		if fnObj == nil {
			return fmt.Sprintf("%s: %s, a parameter of a function literal not held in a variable", c.pos(at), v.Name())
		}
	}
	if c.uses[fnObj] != c.calleeUses[fnObj] {
		return fmt.Sprintf("%s: %s, a parameter of %s, which is passed as a value", c.pos(at), v.Name(), fnObj.Name())
	}
	found := false
	for _, call := range c.calls {
		if !c.calls_(call, fnObj) {
			continue
		}
		found = true
		args := call.Args
		if o.index >= len(args) {
			continue
		}
		for _, arg := range args[o.index:min(o.index+1, len(args))] {
			if why := c.expr(arg); why != "" {
				return fmt.Sprintf("%s: %s, a parameter of %s, called at %s with %s", c.pos(at), v.Name(), fnObj.Name(), c.pos(call), why)
			}
		}
	}
	if !found && o.fn != nil && o.fn.Signature().Recv() != nil {
		return fmt.Sprintf("%s: %s, a parameter of the method %s, which is never called directly", c.pos(at), v.Name(), fnObj.Name())
	}
	return ""
}

// calls_ reports whether call calls fn, directly or through an interface
// method of the same name that fn's receiver implements.
func (c *sqlCheck) calls_(call *ast.CallExpr, fn types.Object) bool {
	got := c.callee(call)
	if got == fn {
		return true
	}
	m, ok1 := got.(*types.Func)
	f, ok2 := fn.(*types.Func)
	if !ok1 || !ok2 || m.Name() != f.Name() || f.Signature().Recv() == nil || m.Signature().Recv() == nil {
		return false
	}
	iface, ok := m.Signature().Recv().Type().Underlying().(*types.Interface)
	return ok && types.Implements(f.Signature().Recv().Type(), iface)
}

func exportedRecv(fn *types.Func) bool {
	t := fn.Signature().Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Exported()
}

// safeStd are functions of the standard library whose text result is
// made only of their text arguments and of digits.
var safeStd = map[string]bool{
	"strings.Join": true, "strings.Repeat": true, "strings.TrimSuffix": true, "strings.TrimPrefix": true,
	"strings.TrimSpace": true, "strings.ToUpper": true, "strings.ToLower": true, "strings.Fields": true,
	"strings.Split": true, "strconv.Itoa": true, "strconv.FormatInt": true, "fmt.Sprint": true, "fmt.Sprintf": true,
}

func (c *sqlCheck) call(call *ast.CallExpr) string {
	if tv := c.info.Types[call.Fun]; tv.IsType() {
		// string(n) of a number is a character, not digits.
		if len(call.Args) == 1 && !inert(c.info.Types[call.Args[0]].Type) || c.info.Types[call.Args[0]].Value != nil {
			return c.expr(call.Args[0])
		}
		return fmt.Sprintf("%s: %s", c.pos(call), c.text(call))
	}
	obj := c.callee(call)
	switch obj := obj.(type) {
	case *types.Builtin:
		switch obj.Name() {
		case "append":
			var reasons []string
			for _, a := range call.Args {
				reasons = append(reasons, c.expr(a))
			}
			return firstReason(reasons...)
		case "make", "new":
			return ""
		}
	case *types.Func:
		if obj.Pkg() == nil {
			break
		}
		if obj.Pkg() == c.pkg {
			if _, ok := sqlTrusted[obj.Name()]; ok {
				return ""
			}
			return c.results(call, 0)
		}
		if safeStd[obj.Pkg().Path()+"."+obj.Name()] {
			var reasons []string
			for _, a := range call.Args {
				t := c.info.Types[a].Type
				if t == nil {
					reasons = append(reasons, fmt.Sprintf("%s: %s", c.pos(a), c.text(a)))
					continue
				}
				if b, ok := t.Underlying().(*types.Basic); ok && inert(b) {
					continue
				}
				if _, ok := t.Underlying().(*types.Struct); ok {
					// fmt would call its String method.
					reasons = append(reasons, fmt.Sprintf("%s: %s", c.pos(a), c.text(a)))
					continue
				}
				reasons = append(reasons, c.expr(a))
			}
			return firstReason(reasons...)
		}
	case *types.Var: // a function literal held in a variable
		if c.uses[obj] == c.calleeUses[obj] {
			if lit, ok := c.lits[obj]; ok && len(c.writes[obj]) == 1 {
				return c.returns(lit.Body, 0, call)
			}
		}
	}
	return fmt.Sprintf("%s: the result of %s", c.pos(call), c.text(call))
}

// results is the index-th result of a call of a function of the package:
// what every return statement gives.
func (c *sqlCheck) results(call *ast.CallExpr, index int) string {
	fn, ok := c.callee(call).(*types.Func)
	if !ok || fn.Pkg() != c.pkg || c.decls[fn] == nil {
		return fmt.Sprintf("%s: the result of %s", c.pos(call), c.text(call))
	}
	if _, ok := sqlTrusted[fn.Name()]; ok {
		return ""
	}
	if c.visiting[fn] {
		return ""
	}
	c.visiting[fn] = true
	defer delete(c.visiting, fn)
	return c.returns(c.decls[fn].Body, index, call)
}

func (c *sqlCheck) returns(body *ast.BlockStmt, index int, call *ast.CallExpr) string {
	why := ""
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if why != "" {
				return false
			}
			var r string
			switch {
			case len(n.Results) == 0:
				r = fmt.Sprintf("%s: a bare return", c.pos(n))
			case len(n.Results) == 1 && index > 0:
				r = c.write(sqlWrite{expr: n.Results[0], index: index})
			default:
				r = c.expr(n.Results[index])
			}
			if r != "" {
				why = fmt.Sprintf("%s, returned by %s at %s", r, c.text(call.Fun), c.pos(n))
			}
		}
		return true
	})
	return why
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}
