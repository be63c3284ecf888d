"""The help texts of the ``singletable`` command (argparse descriptions, epilogs and the
``--format`` options), kept apart from the parser that uses them."""

DESCRIPTION = """\
Model checks and tools for singletable repositories.

  singletable explain myapp.models:Shop          the access-pattern table
  singletable lint myapp.models:Shop             key design checks (exit 1 on errors)
  singletable schema myapp.models:shop           CreateTable JSON / CloudFormation
  singletable layout myapp.models:Shop --items items.json [--html layout.html]
  singletable demo [--layout shop.html]          the demo shop on an embedded DynamoDB
  singletable backfill myapp.models:Shop Order   rewrite Order items whose keys are stale

Targets are MODULE:NAME; the current directory is on the import path."""

LINT_EPILOG = """\
Findings have a code, a severity (error, warning, info) and a subject. Only unacknowledged
errors make the exit status 1. Acknowledge a deliberate finding on the repository:

    class Shop(Repository, table=shop):
        lint_acknowledge = {"hot-partition:Order.GSI2": "sparse queue index, deliberate"}

"code:subject" also covers subjects below it ("hot-partition:Order" covers Order.GSI2);
a bare "code" covers every finding of that code. Acknowledged findings are counted in one
line; --verbose lists each with its reason.

Every finding ends with the link to its rule; the page lists them all, with what each finds,
why it matters and the fix: {url}"""

BACKFILL_EPILOG = """\
Example, after adding GSI2 to Order and deploying the table change:

  singletable backfill myapp.models:Shop Order --segments 4 --checkpoint order.json

Scans the table (a parallel Scan over --segments, filtered on the entity's type tags, current
and former), and rewrites each item whose derived attributes are stale (index keys, sparse
membership, Shard fields, the TTL number, the type tag, the stored datetime format) with an
UpdateItem conditioned on the item being unchanged since it was read. Items that changed
meanwhile are read again once, then reported. --dry-run sends no write and reports what would
change. With --checkpoint a killed run started again with the same options resumes where it
stopped (the file is removed when the job finishes). Items whose primary key would change
are reported; --move moves each in one transaction. The report goes to stdout, a progress
line to stderr. Exit status 1 when an item could not be fixed.

The table is the repository's (or --table NAME) at AWS_ENDPOINT_URL_DYNAMODB, --endpoint URL
or AWS, with the default credentials and region (--region)."""

LAYOUT_EPILOG = """\
--items FILE.json takes either format; the JSON decides:
  wire-format items  a JSON list like [{"PK": {"S": "CUSTOMER#42"}, "SK": {"S": "PROFILE"},
                     "_type": {"S": "CUSTOMER"}}], or an object with an "Items" list (the
                     output of `aws dynamodb scan`): shown as they are.
  seed data          any other JSON object, such as the examples' data.json
                     ({"customers": [...], ...}): loaded through the repository. The table is
                     created in an embedded DynamoDB (moto: pip install "singletable[demo]"),
                     seed(repo) writes it and the items are scanned back. seed is looked up in
                     MODULE, then in the repository's module (--seed MODULE:FUNCTION to name
                     another); it must read its module-level DATA path, which points at
                     FILE.json while it runs.
--endpoint/--table read a live table with a paginated Scan: an inspection tool, never an access
pattern.

The HTML page has a tab per view: the table, then every secondary index (GSI and LSI, the
inverted index too) with the items regrouped by its keys, only the items that carry them
(sparse indexes) and only the attributes it projects (KEYS_ONLY, INCLUDE). Rows are one line;
click a row to wrap its cells. Non-key attributes are columns per entity type, named where a
run of one type begins. The type chips filter the rows to the types pressed; the arrow of a
partition key folds the partition. Clicking a pattern call highlights the rows it returns,
numbered in the order it returns them, and shows the request it sends."""

EXPLAIN_FORMAT = (
    "text: an aligned table wrapped to the terminal's width; markdown: a Markdown table; "
    "json: a list of row objects. Default (auto): text on a terminal, markdown in a pipe or "
    "a file"
)
LINT_FORMAT = (
    "text (default): a block per finding, wrapped to the terminal's width on a terminal; "
    "markdown: a table; json: an object with findings, counts and the exit status. Every "
    "finding ends with the link to its rule"
)
DEMO_FORMAT = (
    "the explain table as text (aligned, wrapped to the terminal's width) or markdown; "
    "default (auto): text on a terminal, markdown in a pipe or a file"
)
