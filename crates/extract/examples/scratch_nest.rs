fn main() {
    let url = url::Url::parse("https://a.example/").unwrap();
    let n = 20_000usize;
    let cases: Vec<(&str, String)> = vec![
        ("a-div", "<a href=/x><div>w ".repeat(n)),
        ("div-a", "<div><a href=/x>w ".repeat(n)),
        ("table-text-b", "<table>x<b>y ".repeat(n)),
        ("table-tr-td", "<table><tr><td>".repeat(n)),
        ("object", "<object>x ".repeat(n)),
        ("button", "<button>x ".repeat(n)),
        ("nobr", "<nobr>x ".repeat(n)),
        ("nobr-distinct", (0..n).map(|i| format!("<nobr id={i}>x ")).collect()),
        ("svg-g", "<svg>".to_owned() + &"<g>x ".repeat(n)),
        ("math-mi", "<math>".to_owned() + &"<mrow>x ".repeat(n)),
        ("select-option", "<select>".to_owned() + &"<optgroup><option>x ".repeat(n)),
        ("ruby", "<ruby>x<rt>y ".repeat(n)),
        ("frameset", "<frameset>".repeat(n)),
        ("dl-dt", "<dl><dt>x ".repeat(n)),
        ("ul-li", "<ul><li>x ".repeat(n)),
        ("p-span-div", "<p><span><div>x ".repeat(n)),
        ("form-nested", "<form><div>x ".repeat(n)),
        ("h1-h2", "<h1>x<h2>y ".repeat(n)),
        ("b-i-misnest", "<b><i>x</b></i> ".repeat(n)),
        ("div-b-close-div", "<div><b>x</div> ".repeat(n)),
        ("template", "<template>x ".repeat(n)),
        ("caption", "<table><caption>x ".repeat(n)),
        ("marquee-b", (0..n).map(|i| format!("<marquee><b id={i}>x ")).collect()),
        ("td-b-distinct", "<table><tr>".to_owned() + &(0..n).map(|i| format!("<td><b id={i}>x ")).collect::<String>()),
        ("li-b-distinct", "<ul>".to_owned() + &(0..n).map(|i| format!("<li><b id={i}>x ")).collect::<String>()),
    ];
    for (label, html) in cases {
        let t = std::time::Instant::now();
        let d = simcrawl_extract::extract(&html, &url, None);
        println!("{label:14} {:>10.1?} capped={} words={}", t.elapsed(), d.nesting_capped, d.full_text.split_whitespace().count());
    }
}
