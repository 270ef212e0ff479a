//! Report generation: verdict tables, counterexample traces and SVG sequence diagrams (being filled in).
