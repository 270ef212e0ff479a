use lockwright_model::check;
use lockwright_model::file::{Faults, LockKind, Scenario, Variant};

fn show(v: Variant, k: LockKind, f: &str, p: u8, t: u8, sym: bool) {
    let sc = Scenario::new(v, k)
        .with_parties(p, t)
        .with_faults(Faults::parse(f).unwrap())
        .with_symmetry(sym);
    let t0 = std::time::Instant::now();
    let r = check(&sc);
    println!(
        "// {} : {} states in {:?}",
        sc.label(),
        r.unique_states,
        t0.elapsed()
    );
    let vname = format!("{:?}", v);
    let kname = format!("{:?}", k);
    println!("        scenario: Scenario::new(Variant::{vname}, LockKind::{kname})\n            .with_parties({p}, {t})\n            .with_faults(faults(\"{}\")),", sc.faults);
    println!("        unique_states: {},", r.unique_states);
    println!("        verdicts: [");
    for v in &r.verdicts {
        println!("            (\"{}\", \"{}\"),", v.name, v.word());
    }
    println!("        ],");
    let viol: Vec<_> = r
        .verdicts
        .iter()
        .filter(|v| v.expectation == stateright::Expectation::Always && !v.holds())
        .collect();
    if viol.is_empty() {
        println!("        counterexamples: &[],");
    } else {
        println!("        counterexamples: &[");
        for v in viol {
            println!(
                "            (\n                \"{}\",\n                &[",
                v.name
            );
            for a in v.path.as_ref().unwrap() {
                println!("                    \"{a}\",");
            }
            println!("                ],\n            ),");
        }
        println!("        ],");
    }
}

#[test]
fn explore() {
    let spec = std::env::var("SCRATCH").unwrap_or_default();
    for line in spec.split(';').filter(|l| !l.trim().is_empty()) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let v = Variant::from_name(parts[0]).unwrap();
        let k = LockKind::from_name(parts[1]).unwrap();
        let f = parts[2];
        let (p, t) = if parts.len() > 3 {
            (parts[3].parse().unwrap(), parts[4].parse().unwrap())
        } else {
            (2, 2)
        };
        show(v, k, f, p, t, parts.len() > 5);
    }
}
