// Package svgplot draws charts over time as inline SVG for pages that open
// from disk: no script, no network, no external program. Every chart of a
// page is drawn with one [Axis], so their time axes line up pixel for
// pixel: rows of labelled spans (fault bands, availability windows, a
// node's roles) above an optional plot area of points on a log scale or
// lines on a linear one.
//
// Charts are rendered by html/template, so labels and titles are escaped
// wherever they come from; geometry is computed here and reaches the
// template as numbers and path data. Points that fall on the same pixel of
// a series are drawn once: the picture is the same and the page smaller.
package svgplot
