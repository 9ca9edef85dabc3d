//! News articles and blog posts, written here as the templates of news sites and blogs lay them
//! out: the article, and around or inside it a byline and date line, tags, a box of related
//! stories, a comment form, an article split over several sections. The story's paragraphs are
//! the main text; the rest is left out.

use simcrawl_extract::{Extractor, MainVia};

use crate::util::{doc, url};

const STORY: [&str; 4] = [
    "The harbour board voted on Tuesday to dredge the eastern channel before the winter storms, \
     ending a dispute with the fishing cooperative that had lasted most of the year.",
    "Dredging will start in October and take about six weeks, during which the channel will be \
     closed to vessels drawing more than three metres at low water.",
    "The cooperative had argued that the spoil should be taken out to sea rather than dumped on \
     the salt marsh, and the board agreed to pay for the longer trips.",
    "A survey of the channel last spring found it had silted up by almost a metre since the last \
     dredging, which was done eleven years ago.",
];

fn story_paragraphs() -> String {
    STORY.iter().map(|p| format!("<p>{p}</p>")).collect()
}

fn assert_story(main: &str) {
    for p in STORY {
        let start = &p[..40];
        assert!(main.contains(start), "the story lost {start:?}: {main:?}");
    }
}

/// A short blog post (under fifty words) followed by WordPress's comment form: the relaxed pass
/// lifts names and forms, but a comment form is never the post's text.
#[test]
fn a_short_posts_comment_form_stays_out() {
    let html = "<html><body><div id=\"page\"><nav><a href=\"/\">Home</a></nav>\
        <div class=\"post\" id=\"post-1\"><h2>Three new posters</h2>\
        <p>The studio released three new posters for the film today. Here they are.</p>\
        <div id=\"respond\"><h3 id=\"reply-title\">Leave a Reply</h3>\
        <form id=\"commentform\"><p>Your email address will not be published. Required fields \
        are marked *</p><label>Name *</label><input name=\"author\"><label>Email *</label>\
        <input name=\"email\"><label>Comment</label><textarea></textarea>\
        <p>You may use these HTML tags and attributes: a abbr acronym b blockquote cite code \
        del em i q strike strong</p></form></div></div></div></body></html>";
    let d = doc(html, "http://blog.example/posters");
    assert!(d.main_text.contains("three new posters for the film"));
    for gone in ["Leave a Reply", "email address", "HTML tags"] {
        assert!(
            !d.main_text.contains(gone),
            "{gone:?} is main text: {:?}",
            d.main_text
        );
    }
}

/// A post's metadata line and its tags are named so; they are no part of the story, in the
/// strict pass or the relaxed one. Its byline stays: the gold of the evaluation pages keeps it
/// more often than not, and the test web tells apart articles by their author.
#[test]
fn post_metadata_and_tags_are_left_out_and_the_byline_stays() {
    let html = format!(
        "<html><body><div class=\"post\"><h1>Channel to be dredged</h1>\
         <p class=\"byline\">By Ann Reporter, 12 November 2012, 10:58</p>\
         <div class=\"entry\">{}</div>\
         <p class=\"postmetadata\">This entry was posted on Monday, November 12th, 2012 and is \
         filed under Harbour, Local news. You can follow any responses through the feed.</p>\
         <div class=\"tags\">Tags: harbour, dredging, fishing</div></div></body></html>",
        story_paragraphs()
    );
    let d = doc(&html, "http://news.example/dredging");
    assert_story(&d.main_text);
    assert!(d.main_text.contains("By Ann Reporter"), "{:?}", d.main_text);
    for gone in ["This entry was posted", "Tags:"] {
        assert!(!d.main_text.contains(gone), "{gone:?} is main text");
    }
}

/// A box of other stories inside the article, under a heading that says what it is, its class
/// giving nothing away; and Jetpack's related posts by their name.
#[test]
fn related_story_boxes_are_cut() {
    let html = format!(
        "<html><body><div class=\"story\"><h1>Channel to be dredged</h1>{}\
         <div class=\"box\"><h3>Related stories</h3><ul>\
         <li><a href=\"/a\">Fishing cooperative elects a new chair after a close vote</a></li>\
         <li><a href=\"/b\">Salt marsh birds return in record numbers this spring</a></li>\
         <li><a href=\"/c\">Ferry timetable changes for the winter months announced</a></li>\
         </ul></div>\
         <div id=\"jp-relatedposts\"><h3>More like this</h3><p>Lighthouse keeper retires after \
         forty years on the point, and the light is to be automated next year.</p></div>\
         </div></body></html>",
        story_paragraphs()
    );
    let explained = Extractor::default().explain(&html, &url("http://news.example/d"), None);
    let main = &explained.document.main_text;
    assert_story(main);
    for gone in [
        "Related stories",
        "Fishing cooperative",
        "Lighthouse keeper",
    ] {
        assert!(!main.contains(gone), "{gone:?} is main text: {main:?}");
    }
    assert!(
        explained
            .dropped
            .iter()
            .any(|d| d.text.contains("Fishing cooperative")),
        "the box is not listed as left out: {:?}",
        explained.dropped
    );
}

/// A "Related" heading in an article's own flow takes a list of links after it out, and nothing
/// when prose follows it.
#[test]
fn a_related_heading_in_the_flow_cuts_only_links() {
    let links = "<h2>Related</h2><p><a href=\"/a\">Fishing cooperative elects a new chair</a></p>\
                 <p><a href=\"/b\">Salt marsh birds return in record numbers</a></p>";
    let html = format!(
        "<html><body><div class=\"text\">{}{links}</div><div class=\"side\">\
         <a href=\"/x\">x</a></div></body></html>",
        story_paragraphs()
    );
    let d = doc(&html, "http://news.example/d");
    assert_story(&d.main_text);
    assert!(
        !d.main_text.contains("Fishing cooperative"),
        "{:?}",
        d.main_text
    );
    // A section about related work is prose: it stays.
    let prose = format!(
        "<html><body><div class=\"text\">{}<h2>Related work</h2><p>{}</p></div></body></html>",
        story_paragraphs(),
        STORY[0]
    );
    let d = doc(&prose, "http://news.example/d");
    assert!(d.main_text.contains("Related work"), "{:?}", d.main_text);
}

/// A page laid out as a table, one row a section of the article: the rows' cells score alike,
/// and the table that holds them is the main block, not the densest cell alone.
#[test]
fn an_article_split_over_table_rows_is_kept_whole() {
    let rows: String = STORY
        .iter()
        .map(|p| format!("<tr><td>{p} {p}</td></tr>"))
        .collect();
    let html = format!(
        "<html><body><table><tr><td><a href=\"/\">Home</a> | <a href=\"/news\">News</a></td></tr>\
         </table><table class=\"layout\">{rows}</table>\
         <div class=\"foot\"><a href=\"/about\">About us</a></div></body></html>"
    );
    let d = doc(&html, "http://news.example/table");
    assert_story(&d.main_text);
    assert!(matches!(
        d.extraction,
        simcrawl_extract::Extraction::Main {
            via: MainVia::DensestBlock,
            ..
        }
    ));
    assert!(!d.main_text.contains("About us"));
}

/// Readers' comments (Movable Type, TypePad): a heading, then paragraphs each followed by a
/// "Posted by: ... | date" line, all in the post's own container and named nothing. They
/// outweigh a short post; the post is the main text, the comments and their heading are not.
#[test]
fn readers_comments_after_a_post_are_cut_by_their_heading_and_bylines() {
    let comments: String = [
        "What a useful write-up, thank you for taking the time to explain the vote and the costs.",
        "I live on the eastern shore and the silt has been terrible for years, this is overdue.",
        "Dumping on the marsh would have been a disaster for the birds, glad the board listened.",
        "Six weeks seems optimistic to me given the weather we usually get in late October here.",
    ]
    .iter()
    .enumerate()
    .map(|(i, c)| {
        format!(
            "<a id=\"c{i}\"></a><p>{c} {c}</p>\
             <p class=\"posted\">Posted by: <a href=\"/u{i}\">Reader {i}</a> | Mar 26, 2007 2:0{i}:18 PM</p>"
        )
    })
    .collect();
    for heading in [
        "<h2><a id=\"comments\"></a>Comments</h2>",
        "<h2 id=\"comments\">Comments</h2>",
        "<h3>4 Comments</h3>",
        "<h3>4 Responses to “Channel to be dredged”</h3>",
    ] {
        let html = format!(
            "<html><body><div id=\"center\"><div class=\"content\">\
             <h3>Channel to be dredged</h3>{}\
             <p class=\"posted\">Posted by Ann on April 6, 2007</p>\
             {heading}{comments}</div></div></body></html>",
            story_paragraphs()
        );
        let d = doc(&html, "http://blog.example/dredging");
        assert_story(&d.main_text);
        for gone in [
            "useful write-up",
            "eastern shore",
            "Reader 2",
            "Comments",
            "Responses",
        ] {
            assert!(
                !d.main_text.contains(gone),
                "{heading}: {gone:?} is main text: {:?}",
                d.main_text
            );
        }
    }
}

/// WordPress's "Ann says:" bylines count as well as "Posted by".
#[test]
fn comments_with_says_bylines_are_cut() {
    let comments: String = (0..3)
        .map(|i| {
            format!(
                "<p>Reader {i} says:</p><p>I walked the channel at dusk last week and it is \
                 barely a metre deep in places, so this cannot come soon enough for us.</p>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><div class=\"wrap\"><h1>Channel to be dredged</h1>{}\
         <h3>3 Responses</h3>{comments}</div></body></html>",
        story_paragraphs()
    );
    let d = doc(&html, "http://blog.example/dredging");
    assert_story(&d.main_text);
    assert!(
        !d.main_text.contains("walked the channel"),
        "{:?}",
        d.main_text
    );
}

/// A manual's chapter called "Comments" (the Rust book's, with `id="comments"` on its heading)
/// is no comment section: no reader's byline follows it, and nothing is cut.
#[test]
fn a_chapter_called_comments_is_kept() {
    let html = "<html><body><nav><a href=\"/\">Contents</a></nav><main>\
        <h1 id=\"comments\"><a class=\"header\" href=\"#comments\">Comments</a></h1>\
        <p>All programmers strive to make their code easy to understand, but sometimes extra \
        explanation is warranted. In these cases, programmers leave comments in their source \
        code that the compiler will ignore but people reading the source code may find useful.</p>\
        <p>Here is a simple comment, which starts with two slashes and continues until the end \
        of the line.</p><pre><code>// hello, world</code></pre>\
        <h2 id=\"doc-comments\">Doc comments</h2><p>Posted by the compiler: nothing at all, \
        since comments are ignored.</p><p>Comments can also be placed at the end of lines \
        containing code, which is the style you will see most often.</p></main></body></html>";
    let d = doc(html, "http://book.example/ch03-04-comments.html");
    for kept in ["All programmers strive", "simple comment", "end of lines"] {
        assert!(
            d.main_text.contains(kept),
            "{kept:?} lost: {:?}",
            d.main_text
        );
    }
}

/// A comment box named in one word (`commentbody`) is comments: a long comment does not
/// outscore the post it answers.
#[test]
fn a_comment_box_named_in_one_word_is_not_the_post() {
    let long_comment = "Engineering defence is not glamorous, but it is where the real work \
        is done, and it always has been, whatever the conference talks say about attacks. "
        .repeat(4);
    let html = format!(
        "<html><body><div class=\"main\"><h2>Channel to be dredged</h2>\
         <p>{}</p><p>{}</p></div>\
         <div class=\"commentbody by-paul\"><p>{long_comment}</p>\
         <p class=\"posted\">Posted by: Paul at November 8, 2012 1:57 PM</p></div>\
         </body></html>",
        STORY[0], STORY[1]
    );
    let d = doc(&html, "http://blog.example/dredging");
    assert!(d.main_text.contains(&STORY[0][..40]), "{:?}", d.main_text);
    assert!(!d.main_text.contains("glamorous"), "{:?}", d.main_text);
}

/// A blog's line of links to the previous and next posts, inside the post's container and
/// named nothing, is no part of the post; a sentence with an arrow in it and a link is.
#[test]
fn a_line_of_links_to_the_previous_and_next_posts_is_cut() {
    let html = format!(
        "<html><body><div class=\"content\">\
         <p align=\"right\"><a href=\"/older\">&laquo; Harbour fees to rise</a> | \
         <a href=\"/\">Main</a> | <a href=\"/newer\">Ferry timetable for winter &raquo;</a></p>\
         <h3>Channel to be dredged</h3>{}\
         <p>Tides on the eastern channel run north → south at the ebb, as the \
         <a href=\"/chart\">chart</a> shows, and <a href=\"/tides\">the tables</a> give the times.</p>\
         </div></body></html>",
        story_paragraphs()
    );
    let d = doc(&html, "http://blog.example/dredging");
    assert_story(&d.main_text);
    assert!(!d.main_text.contains("Harbour fees"), "{:?}", d.main_text);
    assert!(d.main_text.contains("run north"), "{:?}", d.main_text);
}

/// Boxes of other stories the names do not give away, in two more shapes: a heading after the
/// share buttons in the post's container, and a paragraph led by a bold "Related Posts:" label.
#[test]
fn related_boxes_after_share_buttons_or_under_a_label_are_cut() {
    let links = "<a href=\"/a\">Fishing cooperative elects a new chair after a close vote</a><br>\
                 <a href=\"/b\">Salt marsh birds return in record numbers this spring</a>";
    for boxed in [
        format!("<div><a href=\"/share\">Tweet</a><h3>Related posts:</h3><div>{links}</div></div>"),
        format!("<p><strong>Related Posts:</strong><br>{links}</p>"),
    ] {
        let html = format!(
            "<html><body><div class=\"post\"><h1>Channel to be dredged</h1>{}{boxed}</div>\
             </body></html>",
            story_paragraphs()
        );
        let d = doc(&html, "http://news.example/d");
        assert_story(&d.main_text);
        assert!(
            !d.main_text.contains("Fishing cooperative"),
            "{boxed}: {:?}",
            d.main_text
        );
    }
}

/// What the comment and navigation cuts must leave alone: a story's "Reactions" section of
/// quotations ("the minister said:") and the part after it, and a list of links with arrows
/// between them (a manual's renamed functions).
#[test]
fn reactions_quoted_in_a_story_and_links_with_arrows_between_them_stay() {
    let html = format!(
        "<html><body><div class=\"story\"><h1>Channel to be dredged</h1>{}\
         <h2>Reactions</h2>\
         <p>In a statement on Tuesday evening, the chair of the fishing cooperative said:</p>\
         <p>We are glad the board listened, and we will watch the first trips closely.</p>\
         <p>The harbour master, asked about the closure, said:</p>\
         <p>Six weeks is tight, but the contractor has done this channel before.</p>\
         <h2>Aftermath</h2><p>Ferries will use the western channel while the work goes on, \
         adding about ten minutes to each crossing during the six weeks of dredging.</p>\
         <ul><li><a href=\"/old\">harbour_fee_v1</a> → <a href=\"/new\">harbour_fee_v2</a></li>\
         <li><a href=\"/a\">berth_plan_2011</a> → <a href=\"/b\">berth_plan_2012</a></li></ul>\
         </div></body></html>",
        story_paragraphs()
    );
    let d = doc(&html, "http://news.example/dredging");
    assert_story(&d.main_text);
    for kept in [
        "chair of the fishing cooperative said",
        "contractor has done this channel",
        "western channel",
        "harbour_fee_v2",
    ] {
        assert!(
            d.main_text.contains(kept),
            "{kept:?} lost: {:?}",
            d.main_text
        );
    }
}
