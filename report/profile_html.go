package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"sort"
	"strconv"

	"github.com/clrspy/clrspy/stacks"
)

// FlameOptions control WriteFlameGraph.
type FlameOptions struct {
	Weight  Weight
	Threads bool // one root frame per thread
	Title   string
}

// flameNode is a node of the merged call tree, encoded compactly for the
// page as [frame index, total, [children...]].
type flameNode struct {
	frame    int32
	value    int64
	children map[int32]*flameNode
}

func (n *flameNode) child(f int32) *flameNode {
	if n.children == nil {
		n.children = make(map[int32]*flameNode)
	}
	c := n.children[f]
	if c == nil {
		c = &flameNode{frame: f}
		n.children[f] = c
	}
	return c
}

// appendJSON appends n's subtree as [frame, total, [children...]],
// children heaviest first, ties by frame index, so the page is
// deterministic. It iterates with its own stack: a recursive encoder
// (json.Marshal through MarshalJSON) overflowed Go's stack on a 1 M-frame
// stack and, re-encoding each level's output, took 161 s on 100 k frames.
func (n *flameNode) appendJSON(b []byte) []byte {
	type level struct {
		kids []*flameNode
		next int
	}
	sorted := func(n *flameNode) []*flameNode {
		kids := make([]*flameNode, 0, len(n.children))
		for _, c := range n.children {
			kids = append(kids, c)
		}
		sort.Slice(kids, func(i, j int) bool {
			if kids[i].value != kids[j].value {
				return kids[i].value > kids[j].value
			}
			return kids[i].frame < kids[j].frame
		})
		return kids
	}
	open := func(b []byte, n *flameNode) []byte {
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(n.frame), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, n.value, 10)
		return append(b, ",["...)
	}
	b = open(b, n)
	stack := []level{{kids: sorted(n)}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.kids) {
			b = append(b, "]]"...)
			stack = stack[:len(stack)-1]
			continue
		}
		c := top.kids[top.next]
		if top.next > 0 {
			b = append(b, ',')
		}
		top.next++
		b = open(b, c)
		stack = append(stack, level{kids: sorted(c)})
	}
	return b
}

// MaxFlameDepth is the most frames a flame graph draws of one stack. A
// deeper stack (runaway recursion; a crafted trace) keeps its root-side
// frames and its leaf, with one FlameCutName frame standing for the frames
// between: a page of a million rows could not be drawn, and the leaf is
// where the time went.
const MaxFlameDepth = 1000

// FlameCutName names the frame that stands for a deep stack's frames not
// drawn.
const FlameCutName = "[frames not drawn: stack deeper than 1000]"

type flameFrame struct {
	Name   string `json:"n"`
	Module string `json:"m,omitempty"`
	Kind   int    `json:"k"` // stacks.FrameKind: 0 managed, 1 native, 2 unknown, 3 truncated, 4 kernel; flameThread
}

// flameThread is the kind of the root and per-thread frames.
const flameThread = 9

// WriteFlameGraph writes a self-contained HTML page (inline script and
// style, no network) with an interactive flame graph of p: click to zoom,
// search to highlight, hover for values.
func WriteFlameGraph(w io.Writer, p *stacks.Profile, o FlameOptions) error {
	frames := make([]flameFrame, len(p.Frames), len(p.Frames)+len(p.Threads)+1)
	for i, f := range p.Frames {
		frames[i] = flameFrame{Name: f.Name, Module: f.Module, Kind: int(f.Kind)}
	}
	rootIdx := int32(len(frames))
	frames = append(frames, flameFrame{Name: "all", Kind: flameThread})
	root := &flameNode{frame: rootIdx}
	threadFrame := make(map[int]int32)
	cutIdx := int32(-1) // the FlameCutName frame, added on the first deep stack
	cut := int64(0)     // samples whose stack was cut
	for i := range p.Samples {
		s := &p.Samples[i]
		v := o.Weight.of(s)
		if v == 0 {
			continue
		}
		n := root
		n.value += v
		if o.Threads {
			tf, ok := threadFrame[s.Thread]
			if !ok {
				tf = int32(len(frames))
				frames = append(frames, flameFrame{Name: p.Threads[s.Thread].Label(), Kind: flameThread})
				threadFrame[s.Thread] = tf
			}
			n = n.child(tf)
			n.value += v
		}
		stop := 0 // the frames from the root down to stop are drawn
		if len(s.Stack) > MaxFlameDepth {
			stop = len(s.Stack) - (MaxFlameDepth - 2)
			cut += s.Count
		}
		for j := len(s.Stack) - 1; j >= stop; j-- {
			n = n.child(s.Stack[j])
			n.value += v
		}
		if stop > 0 {
			if cutIdx < 0 {
				cutIdx = int32(len(frames))
				frames = append(frames, flameFrame{Name: FlameCutName, Kind: int(stacks.KindTruncated)})
			}
			n = n.child(cutIdx)
			n.value += v
			n = n.child(s.Stack[0])
			n.value += v
		}
	}
	unit := "samples"
	if o.Weight == WeightWall {
		unit = "ns"
	}
	fj, err := json.Marshal(frames)
	if err != nil {
		return err
	}
	data := append([]byte(`{"frames":`), fj...)
	data = append(data, `,"root":`...)
	data = root.appendJSON(data)
	data = append(data, `,"unit":"`+unit+`"}`...)
	notes := p.Notes
	if cut > 0 {
		notes = append(slices.Clip(notes), fmt.Sprintf("%d %s with stacks deeper than %d frames: drawn to that depth, the frames between marked %s", cut, cutNoun(cut, "sample"), MaxFlameDepth, FlameCutName))
	}
	title := o.Title
	if title == "" {
		title = "profile"
	}
	return flameTmpl.Execute(w, map[string]any{
		"Title": "clrspy flame graph: " + title,
		"Info": partialName(fmt.Sprintf("%d samples (%d managed, %d external) on %d threads; value: %s",
			p.Total, p.Managed, p.External, len(p.Threads), unit), notes),
		// json.Marshal escapes <, > and &, so the data cannot close the
		// script element.
		"Data": template.JS(data),
	})
}

var flameTmpl = template.Must(template.New("flame").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:12px system-ui,sans-serif;margin:0;padding:8px;background:#fff;color:#222}
#bar{display:flex;gap:8px;align-items:center;margin-bottom:6px}
#bar input{flex:0 0 260px;padding:2px 4px}
#info{color:#555}
#chart{position:relative;width:100%}
.f{position:absolute;height:17px;overflow:hidden;white-space:nowrap;box-sizing:border-box;border:1px solid #fff;
 padding:0 3px;line-height:15px;cursor:pointer;font-size:11px;border-radius:2px}
.f:hover{border-color:#000}
.hl{background:#e040fb!important;color:#fff}
#tip{position:fixed;pointer-events:none;background:#ffffe0;border:1px solid #999;padding:3px 6px;display:none;max-width:70%;word-break:break-all}
</style></head><body>
<div id="bar"><b>{{.Title}}</b><input id="q" placeholder="search (regexp)"><button id="reset">reset zoom</button><span id="info">{{.Info}}</span><span id="match"></span></div>
<div id="chart"></div><div id="tip"></div>
<script>
"use strict";
const D={{.Data}};
const F=D.frames,chart=document.getElementById("chart"),tip=document.getElementById("tip");
const H=18;
function hue(s,k){if(k===1)return"#b0b0b0";if(k===2)return"#d9d9d9";if(k===3)return"#ffcccc";if(k===9)return"#c8d8f0";if(k===4)return"#f0b070";
 let h=0;for(let i=0;i<s.length;i++)h=(h*31+s.charCodeAt(i))>>>0;return"hsl("+(10+h%45)+","+(60+h%30)+"%,"+(55+h%15)+"%)";}
function depth(n){let d=0;for(const c of n[2])d=Math.max(d,depth(c));return d+1;}
let focus=D.root,re=null;
function draw(){
 chart.innerHTML="";const W=chart.clientWidth,total=focus[1]||1,rows=depth(focus);
 chart.style.height=(rows*H)+"px";
 const frag=document.createDocumentFragment();
 function place(n,x,d){const w=n[1]/total*W;if(w<0.5)return;
  const f=F[n[0]],e=document.createElement("div");e.className="f";
  e.style.left=x+"px";e.style.width=w+"px";e.style.top=(d*H)+"px";e.style.background=hue(f.n,f.k);
  if(w>25)e.textContent=f.n;
  if(re&&re.test(f.n))e.classList.add("hl");
  e.onclick=()=>{focus=n;draw()};
  e.onmousemove=ev=>{tip.style.display="block";tip.style.left=(ev.clientX+12)+"px";tip.style.top=(ev.clientY+12)+"px";
   tip.textContent=f.n+(f.m?"  ["+f.m+"]":"")+"  "+n[1].toLocaleString()+" "+D.unit+" ("+(100*n[1]/(D.root[1]||1)).toFixed(2)+"% of all)"};
  e.onmouseleave=()=>{tip.style.display="none"};
  frag.appendChild(e);let cx=x;for(const c of n[2]){place(c,cx,d+1);cx+=c[1]/total*W}}
 place(focus,0,0);chart.appendChild(frag);
 if(re){let m=0;(function walk(n,inM){const hit=re.test(F[n[0]].n);if(hit&&!inM)m+=n[1];for(const c of n[2])walk(c,inM||hit)})(D.root,false);
  document.getElementById("match").textContent="matched "+(100*m/(D.root[1]||1)).toFixed(2)+"%";}
 else document.getElementById("match").textContent="";
}
document.getElementById("q").oninput=e=>{try{re=e.target.value?new RegExp(e.target.value):null}catch(_){re=null}draw()};
document.getElementById("reset").onclick=()=>{focus=D.root;draw()};
window.onresize=draw;draw();
</script></body></html>
`))
