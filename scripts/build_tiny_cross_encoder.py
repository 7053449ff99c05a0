"""Build the tiny cross-encoder that the tests load through FlashRank instead of the real reranker.

Why this exists: the reranking code path goes through `flashrank.Ranker`, which downloads
`ms-marco-TinyBERT-L-2-v2` (about 4 MB, CC-BY-SA) from Hugging Face unless the model folder is
already in its cache directory. Tests must not touch the network and should not carry a real model,
so this script writes a stand-in folder with the exact files `Ranker` reads:

    tests/fixtures/flashrank/ms-marco-TinyBERT-L-2-v2/
        flashrank-TinyBERT-L-2-v2.onnx   the "model"
        tokenizer.json                   WordLevel tokenizer, BERT-style pair template
        config.json                      pad_token_id
        tokenizer_config.json            model_max_length, pad_token
        special_tokens_map.json          [PAD] [UNK] [CLS] [SEP]

so that `Ranker(model_name="ms-marco-TinyBERT-L-2-v2", cache_dir="tests/fixtures/flashrank")` loads
offline. The model is small but genuine: it is an ONNX graph with the same inputs and output as the
real cross-encoder (input_ids, attention_mask, token_type_ids as int64 [batch, seq]; logits float32
[batch, 1]) and it scores lexical overlap, so tests can assert real ranking behaviour:

    m     = number of (query token, passage token) pairs with the same id, counting only content words
            (stop words, numbers, punctuation, [UNK] and the special tokens weigh 0)
    logit = ln(1 + m) - 0.5          FlashRank's score = sigmoid(logit)

so a passage that shares no content word with the query scores sigmoid(-0.5) ~ 0.3775, one match
~ 0.5481, two ~ 0.6453, three ~ 0.7081, and the score rises strictly with every further match
(the log keeps float32 scores from saturating to 1.0). This is the embedding-sum cross-encoder
q = sum(E[query tokens]), p = sum(E[passage tokens]), logit = ln(1 + q.p) - 0.5 with E having exactly
orthonormal rows (one-hot, weighted): the graph computes q.p directly as a count of equal-id pairs
instead of storing a vocab x vocab matrix, which keeps it exact (no noise between different words)
and a few kilobytes in size.

Only words in CONTENT_WORDS / STOP_WORDS below are known (exact, lower-cased forms; accents are
stripped); anything else becomes [UNK] and is ignored. Tests may import the lists:
`from scripts.build_tiny_cross_encoder import CONTENT_WORDS`.

Run from the repository root (needs the `onnx` package; the output is byte-for-byte deterministic):

    .venv/bin/python -m scripts.build_tiny_cross_encoder [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import WordLevel

MODEL_NAME = "ms-marco-TinyBERT-L-2-v2"
ONNX_FILE = "flashrank-TinyBERT-L-2-v2.onnx"
DEFAULT_OUTPUT_DIR = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "flashrank" / MODEL_NAME

MODEL_MAX_LENGTH = 512
LOGIT_OFFSET = 0.5
# onnxruntime 1.32 runs any opset up to 23 and IR up to 11; stay well below both.
OPSET = 17
IR_VERSION = 8

PAD, UNK, CLS, SEP = "[PAD]", "[UNK]", "[CLS]", "[SEP]"
SPECIAL_TOKENS: tuple[str, ...] = (PAD, UNK, CLS, SEP)

# Function words: in the vocabulary (so they are not [UNK]) but weight 0, so "the" or "is" never makes
# a passage look relevant.
STOP_WORDS: tuple[str, ...] = tuple(
    """
    a an the and or but nor not no yes so if then than that this these those there here
    i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
    is am are was were be been being do does did done doing have has had having will would shall should
    can could may might must ought
    of in on at by for with without from to into onto out over under up down off about above below across
    after before during until since through between among against along around behind beyond near per via
    what which who whom whose when where why how all any both each every few more most other some such
    only own same too very just also again once ever never always often sometimes still yet already
    as because while although though unless whether either neither
    """.split()
)

# Content words: weight 1. Generic English plus the vocabulary of the test documents (tests/fixtures.py:
# the Harbor Logistics report) and of typical test questions.
CONTENT_WORDS: tuple[str, ...] = tuple(
    """
    river rivers flood floods flooding risk risks high low water rain rainfall storm storms weather climate
    cafe sea coast coastal northern southern eastern western north south east west island lake forest mountain
    hill valley land soil earth fire heat wind snow ice river bank bridge road roads street city cities town
    village country countries region regions regional area areas map border world nature environment
    cat cats dog dogs bird birds fish horse animal animals tree trees plant plants flower garden grass
    sat sit sits mat mats hat bed chair table tables desk door window room house home wall floor roof
    harbor harbour port ship ships boat boats truck trucks car cars train trains plane transport
    logistics warehouse warehouses network networks staff staffing employee employees people person
    worker workers operator operators forklift forklifts certification certificate shift shifts
    safety programme program training course courses skill skills team teams manager managers board
    company companies business firm office offices factory facility facilities plant storage cold
    seafood food export exports import imports trade market markets customer customers supplier suppliers
    product products service services order orders delivery deliveries shipping freight cargo pallet
    pallets wrap cardboard paper plastic metal glass wood recycling waste energy power fuel oil gas
    electricity solar initiative initiatives project projects plan plans planned strategy goal goals
    target targets outlook future growth increase decrease change changes result results
    report reports annual quarterly quarter quarters year years month months week weeks day days
    hour hours minute minutes time date today tomorrow yesterday morning evening night season
    revenue revenues profit profits loss losses cost costs price prices sales income budget tax taxes
    money cash pay salary salaries fee fees bill invoice account accounts bank bonds fund funds
    investment investor investors share shares stock stocks million millions billion thousand hundred
    percent total sum number numbers amount average rate rates value values growth
    table row rows column columns cell cells page pages document documents file files section
    chapter paragraph line lines text word words note notes title list summary appendix figure chart
    question questions answer answers source sources citation citations reference references
    search query index data database information record records detail details fact facts
    computer computers software hardware system systems server servers model models code program
    user users password login email message messages phone internet website web online app
    school student students teacher teachers university class lesson book books library study research
    science history art music film game games sport sports football team player players
    health hospital doctor doctors nurse patient patients medicine disease illness care
    law laws court judge police government policy policies rule rules election vote state public
    family child children parent parents mother father brother sister friend friends baby
    man men woman women boy girl name names age life death birth
    open opens opened close closes closed start starts started stop stops stopped end ends ended
    make makes made build builds built create creates created use uses used using
    buy buys bought sell sells sold send sends sent receive receives received
    run runs ran walk walks walked move moves moved travel travels travelled
    read reads write writes wrote written speak speaks spoke talk talks said say says tell told
    see sees saw seen look looks looked watch find finds found lose lost keep keeps kept
    give gives gave given take takes took taken get gets got bring brings brought
    approve approves approved describe describes described list lists listed
    operate operates operated employ employs employed complete completes completed
    good bad best worst better worse big small large little long short new old young early late
    first last next previous main major minor important key simple hard easy fast slow safe dangerous
    hot warm cool cold wet dry clean dirty full empty free busy ready true false right wrong
    red blue green yellow black white grey gray brown orange purple pink
    one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty
    hundred dozen half double single
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday spring summer autumn winter
    """.split()
)

NUMBERS: tuple[str, ...] = tuple(str(n) for n in range(101))
PUNCTUATION: tuple[str, ...] = tuple(".,;:!?'\"()[]{}-/&%$#@*+=<>")


def _unique(words: tuple[str, ...] | list[str]) -> list[str]:
    """Drop repeats, keeping the first occurrence (the word lists above may repeat a word)."""
    return list(dict.fromkeys(words))


def build_vocab() -> tuple[dict[str, int], np.ndarray]:
    """Token -> id (specials first, [PAD] = 0) and the per-id weight: 1.0 for content words, 0.0 otherwise."""
    stop = _unique(STOP_WORDS)
    stop_set = set(stop)
    # A word in both lists is a stop word (e.g. "may" the verb beats "may" the month).
    content = [w for w in _unique(CONTENT_WORDS) if w not in stop_set]
    tokens = [*SPECIAL_TOKENS, *_unique(list(PUNCTUATION)), *NUMBERS, *stop, *content]
    if len(tokens) != len(set(tokens)):
        raise ValueError("vocabulary groups overlap")
    vocab = {token: i for i, token in enumerate(tokens)}
    weights = np.zeros(len(tokens), dtype=np.float32)
    for word in content:
        weights[vocab[word]] = 1.0
    return vocab, weights


def build_tokenizer(vocab: dict[str, int]) -> Tokenizer:
    """WordLevel tokenizer: lowercase + strip accents, BERT pre-tokenizer, `[CLS] A [SEP] B [SEP]` pairs."""
    tokenizer = Tokenizer(WordLevel(vocab=vocab, unk_token=UNK))
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()]
    )
    # Splits on whitespace and on every punctuation character, like BERT's basic tokenizer.
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{CLS}:0 $A:0 {SEP}:0",
        pair=f"{CLS}:0 $A:0 {SEP}:0 $B:1 {SEP}:1",
        special_tokens=[(CLS, vocab[CLS]), (SEP, vocab[SEP])],
    )
    tokenizer.add_special_tokens(list(SPECIAL_TOKENS))
    return tokenizer


def build_model(weights: np.ndarray) -> Any:
    """The ONNX graph: logit = ln(1 + sum_{i in query, j in passage} w_i * w_j * [id_i == id_j]) - offset."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> onnx.NodeProto:
        return helper.make_node(op, inputs, [output], name=output, **attrs)

    float_ = TensorProto.FLOAT
    nodes = [
        # Per-token weight (0 for specials, [UNK], stop words, numbers, punctuation), masked by attention.
        node("Gather", ["token_weights", "input_ids"], "w", axis=0),
        node("Cast", ["attention_mask"], "mask_f", to=float_),
        node("Cast", ["token_type_ids"], "type_f", to=float_),
        node("Mul", ["w", "mask_f"], "w_masked"),
        # Segment 1 (passage incl. its [SEP]) vs segment 0 ([CLS] query [SEP]).
        node("Mul", ["w_masked", "type_f"], "w_passage"),
        node("Sub", ["w_masked", "w_passage"], "w_query"),
        # same[b, i, j] = 1.0 where token i and token j have the same id.
        node("Unsqueeze", ["input_ids", "axis_2"], "ids_col"),
        node("Unsqueeze", ["input_ids", "axis_1"], "ids_row"),
        node("Equal", ["ids_col", "ids_row"], "same_bool"),
        node("Cast", ["same_bool"], "same", to=float_),
        # matches[b] = w_query[b] @ same[b] @ w_passage[b]  ==  q . p with one-hot (orthonormal) embeddings.
        node("Unsqueeze", ["w_query", "axis_1"], "w_query_row"),
        node("Unsqueeze", ["w_passage", "axis_2"], "w_passage_col"),
        node("MatMul", ["w_query_row", "same"], "query_hits"),
        node("MatMul", ["query_hits", "w_passage_col"], "matches_3d"),
        node("Squeeze", ["matches_3d", "axis_2"], "matches"),
        node("Add", ["matches", "one"], "matches_plus_one"),
        node("Log", ["matches_plus_one"], "log_matches"),
        node("Sub", ["log_matches", "offset"], "logits"),
    ]
    initializers = [
        numpy_helper.from_array(weights.astype(np.float32), "token_weights"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis_1"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis_2"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        numpy_helper.from_array(np.array(LOGIT_OFFSET, dtype=np.float32), "offset"),
    ]
    batch_seq = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes,
        "tiny_lexical_cross_encoder",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, batch_seq),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, batch_seq),
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, batch_seq),
        ],
        outputs=[helper.make_tensor_value_info("logits", float_, ["batch", 1])],
        initializer=initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
        producer_name="ragchat scripts/build_tiny_cross_encoder.py",
        doc_string="Test fixture, not a trained model: logit = ln(1 + shared content-word pairs) - 0.5.",
    )
    onnx.checker.check_model(model, full_check=True)
    return model


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def build(output_dir: Path = DEFAULT_OUTPUT_DIR) -> list[Path]:
    """Write the five fixture files into output_dir and return their paths."""
    vocab, weights = build_vocab()
    output_dir.mkdir(parents=True, exist_ok=True)

    onnx_path = output_dir / ONNX_FILE
    onnx_path.write_bytes(build_model(weights).SerializeToString(deterministic=True))

    tokenizer_path = output_dir / "tokenizer.json"
    tokenizer_path.write_text(build_tokenizer(vocab).to_str(pretty=True) + "\n", encoding="utf-8")

    config_path = output_dir / "config.json"
    _write_json(
        config_path,
        {
            "_comment": "Lexical-overlap stand-in for FlashRank's TinyBERT; see scripts/build_tiny_cross_encoder.py.",
            "model_type": "tiny-lexical-cross-encoder",
            "num_labels": 1,
            "pad_token_id": vocab[PAD],
            "vocab_size": len(vocab),
        },
    )
    tokenizer_config_path = output_dir / "tokenizer_config.json"
    _write_json(
        tokenizer_config_path,
        {
            "cls_token": CLS,
            "do_lower_case": True,
            "model_max_length": MODEL_MAX_LENGTH,
            "pad_token": PAD,
            "sep_token": SEP,
            "strip_accents": True,
            "unk_token": UNK,
        },
    )
    special_tokens_path = output_dir / "special_tokens_map.json"
    _write_json(special_tokens_path, {"cls_token": CLS, "pad_token": PAD, "sep_token": SEP, "unk_token": UNK})
    return [onnx_path, tokenizer_path, config_path, tokenizer_config_path, special_tokens_path]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT_DIR, help="default: %(default)s")
    args = parser.parse_args(argv)
    for path in build(args.output_dir):
        print(f"{path}  {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
