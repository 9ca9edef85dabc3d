//! Text layout and the main-content options: words never glue, inert content is never text.

use simcrawl_extract::{ExtractOptions, Extraction, Extractor, FallbackReason, MainVia};

use crate::util::{doc, fingerprint_text, url};

const PAGE: &str = "https://site.example/";

#[test]
fn blocks_breaks_and_cells_separate_words_but_inline_elements_do_not() {
    let d = doc(
        "<p>one</p><p>two</p>three<br>four<ul><li>five</li><li>six</li></ul>\
         <table><tr><td>seven</td><td>eight</td></tr><tr><th>nine</th></tr></table>\
         <div>ten<div>eleven</div>twelve</div><b>thir</b><i>teen</i> <span>four</span>teen \
         word<img src=x>word",
        PAGE,
    );
    assert_eq!(
        d.full_text,
        "one\ntwo\nthree\nfour\nfive\nsix\nseven eight\nnine\nten\neleven\ntwelve\nthirteen fourteen word word"
    );
}

#[test]
fn inert_and_invisible_content_is_never_text() {
    let d = doc(
        "<head><title>T</title><style>p{}</style></head><body>\
         <script>var a = 1;</script><noscript>Enable JavaScript</noscript>\
         <template><p>template</p></template><svg><text>chart</text><title>icon</title></svg>\
         <iframe>frame fallback</iframe><video>no video support</video><canvas>no canvas</canvas>\
         <!-- a comment --><p>visible</p></body>",
        PAGE,
    );
    assert_eq!(d.full_text, "visible");
}

#[test]
fn white_space_is_collapsed_including_no_break_spaces() {
    let d = doc("<p>  a\u{a0}\u{a0}b \n\t c&nbsp;&nbsp;d  </p>", PAGE);
    assert_eq!(d.full_text, "a b c d");
}

fn paragraphs(n: usize, word: &str) -> String {
    (0..n)
        .map(|i| format!("<p>{word} paragraph {i} has a handful of ordinary words in it, enough to score.</p>"))
        .collect()
}

#[test]
fn main_content_can_be_switched_off() {
    let html = format!(
        "<nav>Menu</nav><article>{}</article>",
        paragraphs(5, "Body")
    );
    let off = Extractor::new(ExtractOptions {
        main_content: false,
        ..ExtractOptions::default()
    })
    .extract(&html, &url(PAGE), None);
    assert_eq!(
        off.extraction,
        Extraction::Fallback {
            reason: FallbackReason::Disabled
        }
    );
    assert_eq!(off.main_text, off.full_text);
    assert!(off.main_text.starts_with("Menu\n"));
}

#[test]
fn the_minimum_of_words_is_configurable() {
    let html = format!(
        "<nav>Menu</nav><article>{}</article>",
        paragraphs(1, "Only")
    );
    let strict = doc(&html, PAGE);
    assert_eq!(
        strict.extraction,
        Extraction::Short {
            via: MainVia::Article,
            relaxed: false,
            min_words: 50
        }
    );
    assert_eq!(strict.word_count, 14);
    assert!(!strict.main_text.contains("Menu"));
    let lenient = Extractor::new(ExtractOptions {
        min_main_words: 10,
        ..ExtractOptions::default()
    })
    .extract(&html, &url(PAGE), None);
    assert_eq!(
        lenient.extraction,
        Extraction::Main {
            via: MainVia::Article,
            relaxed: false
        }
    );
    assert!(!lenient.main_text.contains("Menu"));
}

#[test]
fn empty_and_link_only_pages_have_no_candidate() {
    for html in ["", "<a href=/a>A</a> <a href=/b>B</a>", "<p>short</p>"] {
        let d = doc(html, PAGE);
        assert_eq!(
            d.extraction,
            Extraction::Fallback {
                reason: FallbackReason::NoCandidate
            },
            "{html:?}"
        );
        assert_eq!(d.main_text, d.full_text);
    }
}

#[test]
fn hidden_elements_are_boilerplate_in_the_main_text_only() {
    let html = format!(
        "<div id=story>{}<p hidden>Hidden paragraph</p><div style='display: none'>Invisible div</div>\
         <span aria-hidden=true>Icon label</span><span class=sr-only>Opens in a new window</span></div>",
        paragraphs(4, "Story")
    );
    let d = doc(&html, PAGE);
    assert_eq!(
        d.extraction,
        Extraction::Main {
            via: MainVia::DensestBlock,
            relaxed: false
        }
    );
    for hidden in [
        "Hidden paragraph",
        "Invisible div",
        "Icon label",
        "Opens in a new window",
    ] {
        assert!(!d.main_text.contains(hidden), "{hidden}");
        assert!(d.full_text.contains(hidden), "{hidden}");
    }
}

#[test]
fn a_header_inside_an_article_is_content_and_outside_it_is_not() {
    let html = format!(
        "<header>Site header</header><div class=post><header>Post header</header>{}</div>\
         <article><header><h1>Article header</h1></header>{}</article>",
        paragraphs(1, "Post"),
        paragraphs(5, "Article")
    );
    let d = doc(&html, PAGE);
    assert!(
        d.main_text
            .starts_with("Article header\nArticle paragraph 0")
    );
    assert!(!d.main_text.contains("Site header"));
    let post = format!(
        "<header>Site header</header><div class=post><header>Post header</header>{}</div>",
        paragraphs(5, "Post")
    );
    let d = doc(&post, PAGE);
    assert!(
        d.main_text.starts_with("Post header\nPost paragraph 0"),
        "{}",
        d.main_text
    );
}

#[test]
fn the_richest_of_several_articles_wins_when_it_dominates() {
    let html = format!(
        "<article>{}</article><article>{}</article><article>{}</article>",
        paragraphs(1, "Teaser"),
        paragraphs(6, "Lead"),
        paragraphs(1, "Other")
    );
    let d = doc(&html, PAGE);
    assert_eq!(
        d.extraction,
        Extraction::Main {
            via: MainVia::Article,
            relaxed: false
        }
    );
    assert!(d.main_text.starts_with("Lead paragraph 0"));
    assert!(!d.main_text.contains("Teaser") && !d.main_text.contains("Other"));
}

#[test]
fn dense_text_siblings_join_the_densest_block() {
    // Content split over two containers and a loose paragraph, next to a link list.
    let html = format!(
        "<div id=wrap><div class=part>{}</div><p>A loose paragraph sits between the two parts of the story, and it is long enough to count as dense text.</p>\
         <div class=part>{}</div><div class=links><a href=/1>One link</a> <a href=/2>Two link</a> <a href=/3>Three links here</a></div></div>",
        paragraphs(6, "First"),
        paragraphs(2, "Second")
    );
    let d = doc(&html, PAGE);
    assert_eq!(
        d.extraction,
        Extraction::Main {
            via: MainVia::DensestBlock,
            relaxed: false
        }
    );
    assert!(d.main_text.starts_with("First paragraph 0"));
    assert!(d.main_text.contains("\nA loose paragraph"));
    assert!(
        d.main_text.ends_with(
            "Second paragraph 1 has a handful of ordinary words in it, enough to score."
        )
    );
    assert!(!d.main_text.contains("One link"));
}

#[test]
fn step_containers_without_links_join_the_densest_block_and_a_related_box_does_not() {
    // A how-to page (eHow's layout): the intro, then one container per step (a heading span and a
    // short paragraph), with a box of related links and an ad between them.
    let step = |n: u32, text: &str| {
        format!(
            "<div class='mod step'><div class=stepContent><div class=content>\
             <span class=headline2>Step {n}</span><p>{text}</p></div></div></div>"
        )
    };
    let html = format!(
        "<div id=body><div class=intro>{}</div>{}\
         <div class=related><ul><li><a href=/a>Plant terrarium ideas for a small flat</a></li>\
         <li><a href=/b>How to build a terrarium with succulent plants</a></li></ul></div>{}{}</div>",
        paragraphs(3, "Intro"),
        step(
            1,
            "Measure the circumference of your cloche and cut the foam oasis about three quarters of an inch smaller."
        ),
        step(
            2,
            "Insert your plant into the hole, then cover the foam with moss all around it using floral pins."
        ),
        step(
            3,
            "Gently place the cloche over the oasis; the glass keeps the moisture inside the terrarium for weeks."
        )
    );
    let d = doc(&html, PAGE);
    assert!(
        d.main_text.starts_with("Intro paragraph 0"),
        "{}",
        d.main_text
    );
    for n in 1..=3 {
        assert!(
            d.main_text.contains(&format!("Step {n}")),
            "{}",
            d.main_text
        );
    }
    assert!(!d.main_text.contains("terrarium ideas"), "{}", d.main_text);
}

#[test]
fn classes_on_html_and_body_describe_the_page_not_boilerplate() {
    let html = format!(
        "<html class=nav-closed><body class='single has-sidebar modal-open cookie-consent-shown' hidden>\
         <div class=entry-content>{}</div><div class=sidebar>{}</div></body></html>",
        paragraphs(5, "Entry"),
        paragraphs(1, "Side")
    );
    let d = doc(&html, PAGE);
    assert_eq!(
        d.extraction,
        Extraction::Main {
            via: MainVia::DensestBlock,
            relaxed: false
        }
    );
    assert!(d.main_text.starts_with("Entry paragraph 0") && !d.main_text.contains("Side"));
}

#[test]
fn an_element_named_like_boilerplate_around_most_of_the_prose_is_a_wrapper_but_comments_are_not() {
    // InfoWorld's layout: the whole article sits in `<div class="share_wrapper">`, beside a short
    // promotion that is not named like boilerplate at all.
    let promo = "<div class=box><h3>White Paper</h3><p>Learn why and how our service desk \
                 solution empowers IT staff through social collaboration and visualisation to \
                 speed up incident resolution. Read the report from the analysts of the year \
                 and see what your team could do with it. Gartner's recent magic quadrant for \
                 service support management named no vendor a leader or an innovator this \
                 year.</p><a href=/wp>Read now</a></div>";
    let html = format!(
        "<div id=page><div class=share_wrapper><h1>EMC upgrades its line</h1>{}</div>{promo}\
         <div class=share><a href=/t>Tweet</a> <a href=/f>Share</a></div></div>",
        paragraphs(40, "Story")
    );
    let d = doc(&html, PAGE);
    assert!(
        d.main_text.contains("Story paragraph 39"),
        "{}",
        d.main_text
    );
    assert!(!d.main_text.contains("White Paper"), "{}", d.main_text);
    assert!(!d.main_text.contains("Tweet"), "{}", d.main_text);

    // Comments that outweigh a short article stay out of it.
    let html = format!(
        "<div id=page><div class=entry>{}</div><div id=comments>{}</div></div>",
        paragraphs(5, "Story"),
        paragraphs(12, "Reader")
    );
    let d = doc(&html, PAGE);
    assert!(d.main_text.contains("Story paragraph 4"), "{}", d.main_text);
    assert!(!d.main_text.contains("Reader"), "{}", d.main_text);
}

#[test]
fn a_copyright_footer_that_outweighs_a_reference_page_is_never_its_wrapper() {
    // BoostBook's concept pages: the content is a few definitions and a table; the license in
    // `<div class="copyright-footer">` has more prose than all of it. Two concept pages had
    // the license as their one main text, and the same text made them copies.
    let license = "Copyright © 2001 Indiana University. Distributed under the Boost Software \
                   License, Version 1.0. Permission to use, copy, modify, distribute and sell \
                   this software and its documentation for any purpose is hereby granted without \
                   fee, provided that the above copyright notice appears in all copies and that \
                   both that copyright notice and this permission notice appear in supporting \
                   documentation. It is provided as is without express or implied warranty.";
    let html = format!(
        "<div class=refentry><h2>Concept CopyConstructible</h2><div class=refsect1><h3>\
         Description</h3><p>A type that can be copied.</p></div><table><tr><td>X</td><td>\
         the type</td></tr></table></div><table width=100%><tr><td align=right><div \
         class=copyright-footer>{license}</div></td></tr></table>"
    );
    let d = doc(&html, PAGE);
    // The strict rules leave the license out; only the relaxed rules take it, and a main text
    // only they found is a short page's (judged by its whole page).
    assert!(
        !matches!(d.extraction, Extraction::Main { relaxed: false, .. })
            || !d.main_text.contains("Permission to use"),
        "{:?}: {}",
        d.extraction,
        d.main_text
    );
}

#[test]
fn a_post_named_as_content_beats_a_sidebars_long_paragraph() {
    // Blogger's layout: the post is short lines between `<br>`s and `<div>`s, none of them a
    // paragraph by length; the sidebar's profile is one long paragraph.
    let lines: String = [
        "Dear all,",
        "I would love to invite you",
        "to the book event at",
        "The Reading Bug, Saturday,",
        "October 27 at 11 am.",
        "Location: 785 Laurel St,",
        "San Carlos, California.",
        "Hope to see you there.",
        "Cheers, Alina",
    ]
    .iter()
    .map(|l| format!("<div>{l}</div>"))
    .collect();
    let html = format!(
        "<div class=main><div class='post hentry'><h3 class=post-title>Little gifts</h3>\
         <div class='post-body entry-content'>{lines}{lines}</div></div></div>\
         <div class=sidebar-profile><p>Thank you for visiting my blog. Professionally, I am a \
         story artist at a film studio. For fun, I do gallery and museum exhibitions, publish \
         children's picture books and graphic novels, radio broadcasts and podcasts, and \
         travel, eat and sleep.</p></div>"
    );
    let d = doc(&html, PAGE);
    assert!(
        d.main_text.contains("Hope to see you there."),
        "{}",
        d.main_text
    );
    assert!(
        !d.main_text.contains("Thank you for visiting"),
        "{}",
        d.main_text
    );
}

/// A DocBook release-notes page: a titled section holding one section per release, each a
/// heading and a list of entries, most of them a link to their bug.
fn release_notes(newest: u32) -> String {
    let mut html = String::from(
        "<body><table><tr><td><a href=/>Home</a></td><td><a href=/libs>Libraries</a></td></tr></table>\
         <div class=section><div class=titlepage><h2 class=title><a href=#notes>Release Notes</a></h2></div>\
         <div class=toc><a href=#r3>Release 3</a> <a href=#r2>Release 2</a> <a href=#r1>Release 1</a></div>",
    );
    for release in (1..=newest).rev() {
        html.push_str(&format!(
            "<div class=section><div class=titlepage><h3 class=title><a href=#r{release}>Release {release}</a></h3></div><ul>"
        ));
        if release == 1 {
            html.push_str(&format!(
                "<li>Release {release} rewrote the allocator so that inserting at one end no longer reallocates the whole buffer every time.</li>\
                 <li>Release {release} also compiles without warnings on the strictest settings of every supported compiler.</li>"
            ));
        } else {
            for bug in 0..4 {
                html.push_str(&format!(
                    "<li><a href=https://bugs.example.org/{release}{bug}>Bug {release}{bug}: \"the container crashes when a range of {bug} elements is inserted twice\"</a>.</li>"
                ));
            }
        }
        html.push_str("</ul></div>");
    }
    html.push_str("</div><div class=copyright-footer>Copyright the authors</div></body>");
    html
}

#[test]
fn a_document_of_titled_sections_is_one_main_text_even_when_its_entries_are_links() {
    // Release 1's prose scores; releases 2 to 6 are lists of links to their bugs and score
    // nothing. They are the page's content all the same: the sections of one outline.
    let d = doc(&release_notes(6), PAGE);
    for release in 1..=6 {
        assert!(
            d.main_text.contains(&format!("Release {release}")),
            "release {release} missing from {:?}",
            d.main_text
        );
    }
    assert!(d.main_text.contains("Bug 63: \"the container crashes"));
    assert!(d.main_text.contains("Release 1 rewrote the allocator"));
    assert!(!d.main_text.contains("Libraries"));
    // Two versions of the notes, the newer with one more release, are two texts (with only
    // the section that scores best, they were one: a changed page skipped as a copy).
    let older = doc(&release_notes(5), PAGE);
    assert!(!older.main_text.contains("Release 6"));
    assert_ne!(fingerprint_text(&d), fingerprint_text(&older));
}

#[test]
fn a_layout_grid_of_rows_is_not_an_outline() {
    // Rows of one class, the first with the title and the last with other stories: the
    // article's own row is not led by a heading, so the rows are a layout, not sections.
    let html = format!(
        "<body><div class=container><div class=row><h1>The headline of the story</h1></div>\
         <div class=row><div class=story>{}</div></div>\
         <div class=row><h3>Other stories</h3><p>{}</p></div>\
         <div class=row><h3>Most read</h3><p>{}</p></div></div></body>",
        paragraphs(6, "Story"),
        "A teaser for another story, with enough words in it to be taken for a paragraph of text.",
        "A teaser for the most read story, with enough words in it to be taken for a paragraph.",
    );
    let d = doc(&html, PAGE);
    assert!(d.main_text.contains("Story paragraph 5"));
    assert!(!d.main_text.contains("Most read"), "{:?}", d.main_text);
}

#[test]
fn a_manual_page_is_all_its_sections_not_the_longest() {
    // asciidoc's manual pages: the title in a header, then one `sect1` per part (synopsis,
    // description, options), the options split into `sect2`s. The longest `sect2` alone was
    // the main text: a fifth of the page.
    let sect2 = |name: &str, n: usize| {
        format!(
            "<div class=sect2><h3>{name}</h3><div class=paragraph><p>{}</p></div></div>",
            paragraphs(n, name).replace("<p>", "").replace("</p>", " ")
        )
    };
    let html = format!(
        "<body><div id=header><h1>git-rev-list(1) Manual Page</h1></div><div id=content>\
         <div class=sect1><h2>SYNOPSIS</h2><div class=sectionbody><pre>git rev-list [options] commit</pre></div></div>\
         <div class=sect1><h2>DESCRIPTION</h2><div class=sectionbody><p>{}</p></div></div>\
         <div class=sect1><h2>OPTIONS</h2><div class=sectionbody>{}{}{}</div></div>\
         <div class=sect1><h2>EXAMPLES</h2><div class=sectionbody><p>{}</p></div></div></div>\
         <div id=footer>Last updated 2024-05-31</div></body>",
        "List commits that are reachable by following the parent links from the given commits.",
        sect2("Limiting", 8),
        sect2("Simplification", 3),
        sect2("Ordering", 2),
        "Print the list of commits reachable from the current branch, newest first, one per line.",
    );
    let d = doc(&html, PAGE);
    for part in [
        "SYNOPSIS",
        "List commits that are reachable",
        "Limiting paragraph 7",
        "Simplification paragraph 2",
        "Ordering paragraph 1",
        "EXAMPLES",
    ] {
        assert!(
            d.main_text.contains(part),
            "{part:?} missing: {:?}",
            d.main_text
        );
    }
}

#[test]
fn a_pages_columns_led_by_headings_are_not_an_outline() {
    // A blog's columns are bare `div`s with ids (the post, the sidebar, the links outside),
    // each led by a heading: not sections of one kind.
    let html = format!(
        "<body><div id=container><div id=one><h2>October 10</h2><h3>A day in Dresden</h3>{}</div>\
         <div id=two><h2>Trips this year</h2><p>{}</p></div>\
         <div id=three><h2>Places to eat</h2><p>{}</p></div></div></body>",
        paragraphs(6, "Dresden"),
        "Every entry of the archives, <a href=/archives>month by month</a>, with the places and the food of each trip.",
        "Books and records the author <a href=/reading>recommends</a>, each with a few words on why it is worth it.",
    );
    let d = doc(&html, PAGE);
    assert!(d.main_text.contains("Dresden paragraph 5"));
    assert!(!d.main_text.contains("Places to eat"), "{:?}", d.main_text);
}

#[test]
fn an_outline_written_flat_is_one_main_text() {
    // Doxygen's reference pages: a summary table of members, then each member's heading and
    // its documentation side by side in one container, no section around either. The summary
    // alone was the main text: a seventh of the page.
    let member = |name: &str| {
        format!(
            "<h2 class=memtitle>{name}()</h2><div class=memitem><div class=memproto>template&lt;typename _It&gt; \
             constexpr _It std::{name}(_It first, _It last)</div><div class=memdoc><p>Finds the first \
             element for which {name} holds in the range.</p><dl><dt>Parameters</dt><dd><a href=/it>first</a> \
             <a href=/it>last</a></dd></dl></div></div>"
        )
    };
    let summary: String = [
        "adjacent_find", "all_of", "any_of", "count", "count_if", "equal", "find", "find_if",
        "mismatch", "none_of", "search", "search_n",
    ]
        .iter()
        .map(|n| {
            format!(
                "<tr><td>template&lt;typename _ForwardIterator, typename _BinaryPredicate&gt; constexpr \
                 _ForwardIterator std::{n} (_ForwardIterator __first, _ForwardIterator __last)</td></tr>"
            )
        })
        .collect();
    let html = format!(
        "<body><div class=header><div class=title>Non-Mutating</div></div><div class=contents>\
         <table class=memberdecls>{summary}</table><h2 class=groupheader>Detailed Description</h2>\
         {}{}{}{}</div><div id=nav-path class=navpath>libstdc++ algorithms</div></body>",
        member("adjacent_find"),
        member("all_of"),
        member("any_of"),
        member("count_if"),
    );
    let d = doc(&html, PAGE);
    assert!(
        d.main_text.contains("std::equal (_ForwardIterator"),
        "{:?}",
        d.main_text
    );
    for name in ["adjacent_find", "all_of", "any_of", "count_if"] {
        assert!(
            d.main_text
                .contains(&format!("Finds the first element for which {name} holds")),
            "{name} missing: {:?}",
            d.main_text
        );
    }
}

#[test]
fn a_section_named_after_its_heading_is_no_widget() {
    // Django's Sphinx pages: each section's id is its heading's slug, and a heading about
    // widgets made its whole section boilerplate (`widget` names a sidebar's boxes). A box of
    // comments opening with its one-word heading stays what it is.
    let section = |id: &str, heading: &str, word: &str| {
        format!(
            "<div class=section id={id}><h2>{heading}<a class=headerlink href=#{id}>¶</a></h2>{}</div>",
            paragraphs(3, word)
        )
    };
    let html = format!(
        "<body><div class=document><div class=section id=s-widgets><h1>Widgets</h1><p>{}</p>{}{}{}</div></div>\
         <div id=comments><h3>Comments</h3><p>{}</p></div></body>",
        "A widget is the representation of an HTML input element, and it renders the element.",
        section("s-forms", "Forms and fields", "Forms"),
        section("s-specifying-widgets", "Specifying widgets", "Specifying"),
        section(
            "s-customizing-widget-instances",
            "Customizing widget instances",
            "Customizing"
        ),
        "A reader wrote a long comment here about how much they liked the widgets of this page.",
    );
    let d = doc(&html, PAGE);
    assert!(
        d.main_text.contains("Specifying paragraph 2"),
        "{:?}",
        d.main_text
    );
    assert!(
        d.main_text.contains("Customizing paragraph 2"),
        "{:?}",
        d.main_text
    );
    assert!(!d.main_text.contains("A reader wrote"), "{:?}", d.main_text);
}
