"""Models the zoo does not list, from the same libraries: the check that the
frontend is built for the Core ATen op set and not for the zoo's models.

    python -m doppler.zoo_unseen                        # every model, a table on stdout
    python -m doppler.zoo_unseen --table docs/zoo.md    # ... and as a section of docs/zoo.md
    python -m doppler.zoo_unseen swin_t gemma            # some of them

Each model is built with random weights at a small configuration (seed 0,
nothing downloaded) and run through `doppler.run(devices=4, system="cpu4")`
handed over as an nn.Module and as an ExportedProgram (torch 2.x; torch
1.x's symbolic_trace path otherwise), then compared with PyTorch eager.
`scripts/zoo_unseen.py` is the same command.
"""

import argparse
import collections
import os
import re
import sys
import time

import torch

from . import zoo
from .errors import DopplerError

_SEQ = 8
_VOCAB = 64


def _ids(batch=1, seq=_SEQ):
    return torch.randint(0, _VOCAB, (batch, seq))


def _image(size=32, batch=1):
    return torch.randn(batch, 3, size, size)


def _tv():
    import torchvision
    return torchvision


def _tf():
    import transformers
    return transformers


# -- torchvision -----------------------------------------------------------------------


def _tv_model(name, size=32, **kwargs):
    def build():
        model = getattr(_tv().models, name)(num_classes=10, **kwargs)
        # The classifier's bias is zeroed: where random features are small
        # (ShuffleNet's are 1e-5), the logits would be the bias alone and
        # any features would compare equal.
        heads = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
        if heads and heads[-1].bias is not None:
            torch.nn.init.zeros_(heads[-1].bias)
        return model, (_image(size),)
    build.__name__ = name
    return build


_TORCHVISION = [
    ("resnet50", _tv_model("resnet50")),
    ("wide_resnet50_2", _tv_model("wide_resnet50_2")),
    ("resnext50_32x4d", _tv_model("resnext50_32x4d")),
    ("densenet121", _tv_model("densenet121")),
    ("squeezenet1_1", _tv_model("squeezenet1_1", size=64)),
    ("shufflenet_v2_x0_5", _tv_model("shufflenet_v2_x0_5")),
    ("mnasnet0_5", _tv_model("mnasnet0_5")),
    ("regnet_y_400mf", _tv_model("regnet_y_400mf")),
    ("efficientnet_v2_s", _tv_model("efficientnet_v2_s")),
    ("mobilenet_v3_small", _tv_model("mobilenet_v3_small")),
    ("googlenet", _tv_model("googlenet", aux_logits=False, init_weights=True)),
    ("inception_v3", _tv_model("inception_v3", size=75, aux_logits=False, init_weights=True)),
    ("vgg11", lambda: _vgg11()),
    ("alexnet", _tv_model("alexnet", size=64)),
    ("swin_t", _tv_model("swin_t", size=64)),
    ("maxvit", lambda: _maxvit()),
    ("swin_v2_t", _tv_model("swin_v2_t", size=64)),
    ("mobilenet_v3_large", _tv_model("mobilenet_v3_large")),
    ("regnet_x_400mf", _tv_model("regnet_x_400mf")),
    ("r3d_18", lambda: _video("r3d_18")),
    ("r2plus1d_18", lambda: _video("r2plus1d_18")),
    ("lraspp_mobilenet_v3", lambda: _segmentation("lraspp_mobilenet_v3_large")),
    ("deeplabv3_mobilenet_v3", lambda: _segmentation("deeplabv3_mobilenet_v3_large",
                                                     aux_loss=False)),
    ("fcn_resnet50", lambda: _segmentation("fcn_resnet50", aux_loss=False)),
]


def _video(name):
    """A torchvision video classifier on 4 frames of 32x32."""
    model = getattr(_tv().models.video, name)(num_classes=10)
    torch.nn.init.zeros_(model.fc.bias)
    return model, (torch.randn(1, 3, 4, 32, 32),)


def _segmentation(name, **kwargs):
    """A torchvision segmentation model (its result: a dict of maps)."""
    model = getattr(_tv().models.segmentation, name)(num_classes=3, weights=None,
                                                       weights_backbone=None, **kwargs)
    return model, (_image(64),)


def _vgg11():
    """torchvision's VGG-11 with its classifier's 4096-wide layers at 64
    (at 4096 its 123 M parameters are 490 MB of arguments)."""
    model, inputs = _tv_model("vgg11")()
    nn = torch.nn
    model.classifier = nn.Sequential(nn.Linear(512 * 7 * 7, 64), nn.ReLU(True), nn.Dropout(),
                                     nn.Linear(64, 64), nn.ReLU(True), nn.Dropout(),
                                     nn.Linear(64, 10))
    return model, inputs


def _maxvit():
    """torchvision's MaxViT at a small configuration (maxvit_t's partition
    size 7 needs 224x224 images)."""
    from torchvision.models.maxvit import MaxVit
    model = MaxVit(input_size=(32, 32), stem_channels=16, partition_size=2,
                   block_channels=[16, 32], block_layers=[1, 1], head_dim=8,
                   stochastic_depth_prob=0.0, num_classes=10)
    return model, (_image(32),)


# -- transformers ----------------------------------------------------------------------

# Small shapes shared by the text models (each config class names them its own way).
_WIDTH = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
              num_attention_heads=4, vocab_size=_VOCAB, max_position_embeddings=64)


def _hf(model_class, config_class, inputs, **config):
    """A builder of transformers' `model_class` from `config_class(**config)`."""
    def build():
        tf = _tf()
        cfg = getattr(tf, config_class)(**config)
        if hasattr(cfg, "use_cache"):
            cfg.use_cache = False
        return getattr(tf, model_class)(cfg), inputs()
    build.__name__ = model_class
    return build


def _text():
    return (_ids(),)


def _text_mask():
    mask = torch.ones(1, _SEQ, dtype=torch.long)
    mask[:, -2:] = 0
    return (_ids(), mask)


def _pixels(size=32):
    return lambda: (_image(size),)


_DECODER = dict(_WIDTH, num_key_value_heads=2)
_VISION = dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=64,
               num_hidden_layers=2, num_attention_heads=2, num_labels=10)

_TRANSFORMERS = [
    ("gpt_neo", _hf("GPTNeoForCausalLM", "GPTNeoConfig", _text, vocab_size=_VOCAB,
                    max_position_embeddings=64, hidden_size=32, num_layers=2, num_heads=4,
                    attention_types=[[["global", "local"], 1]], window_size=4)),
    ("gptj", _hf("GPTJForCausalLM", "GPTJConfig", _text, vocab_size=_VOCAB, n_positions=64,
                 n_embd=32, n_layer=2, n_head=4, rotary_dim=4)),
    ("gpt_neox", _hf("GPTNeoXForCausalLM", "GPTNeoXConfig", _text, **_WIDTH)),
    ("opt", _hf("OPTForCausalLM", "OPTConfig", _text, vocab_size=_VOCAB, hidden_size=32,
                ffn_dim=64, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=64, word_embed_proj_dim=32)),
    ("bloom", _hf("BloomForCausalLM", "BloomConfig", _text, vocab_size=_VOCAB, hidden_size=32,
                  n_layer=2, n_head=4)),
    ("falcon", _hf("FalconForCausalLM", "FalconConfig", _text, vocab_size=_VOCAB,
                   hidden_size=32, num_hidden_layers=2, num_attention_heads=4)),
    ("phi", _hf("PhiForCausalLM", "PhiConfig", _text, **_WIDTH)),
    ("phi3", _hf("Phi3ForCausalLM", "Phi3Config", _text, pad_token_id=0, **_DECODER)),
    ("gemma", _hf("GemmaForCausalLM", "GemmaConfig", _text, head_dim=8, **_DECODER)),
    ("gemma2", _hf("Gemma2ForCausalLM", "Gemma2Config", _text, head_dim=8, **_DECODER)),
    ("qwen3", _hf("Qwen3ForCausalLM", "Qwen3Config", _text, head_dim=8, **_DECODER)),
    ("mixtral", _hf("MixtralForCausalLM", "MixtralConfig", _text, num_local_experts=4,
                    num_experts_per_tok=2, **_DECODER)),
    ("stablelm", _hf("StableLmForCausalLM", "StableLmConfig", _text, **_DECODER)),
    ("olmo", _hf("OlmoForCausalLM", "OlmoConfig", _text, **_DECODER)),
    ("t5_encoder", _hf("T5EncoderModel", "T5Config", _text_mask, vocab_size=_VOCAB, d_model=32,
                       d_kv=8, d_ff=64, num_layers=2, num_heads=4)),
    ("bart_encoder", lambda: _bart_encoder()),
    ("electra", _hf("ElectraModel", "ElectraConfig", _text_mask, embedding_size=32, **_WIDTH)),
    ("albert", _hf("AlbertModel", "AlbertConfig", _text_mask, embedding_size=16, **_WIDTH)),
    ("deberta_v2", _hf("DebertaV2Model", "DebertaV2Config", _text_mask, **_WIDTH)),
    ("mpnet", _hf("MPNetModel", "MPNetConfig", _text_mask, **_WIDTH)),
    ("xlm_roberta", _hf("XLMRobertaModel", "XLMRobertaConfig", _text_mask, **_WIDTH)),
    ("modernbert", _hf("ModernBertModel", "ModernBertConfig", _text_mask, hidden_size=32,
                       intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                       vocab_size=_VOCAB, max_position_embeddings=64, pad_token_id=0,
                       bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2)),
    ("deit", _hf("DeiTForImageClassification", "DeiTConfig", _pixels(), **_VISION)),
    ("beit", _hf("BeitForImageClassification", "BeitConfig", _pixels(), **_VISION)),
    ("dinov2", _hf("Dinov2Model", "Dinov2Config", _pixels(), **dict(_VISION, num_labels=2))),
    ("swin", _hf("SwinForImageClassification", "SwinConfig", _pixels(), image_size=32,
                 patch_size=2, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4,
                 num_labels=10)),
    ("segformer", _hf("SegformerForSemanticSegmentation", "SegformerConfig", _pixels(),
                      num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                      hidden_sizes=[16, 32], num_attention_heads=[1, 2], patch_sizes=[7, 3],
                      strides=[4, 2], decoder_hidden_size=32, num_labels=3)),
    ("hf_regnet", _hf("RegNetForImageClassification", "RegNetConfig", _pixels(),
                      embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8,
                      num_labels=10)),
    ("hf_resnet", _hf("ResNetForImageClassification", "ResNetConfig", _pixels(),
                      embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1],
                      num_labels=10)),
    ("mobilevit", _hf("MobileViTForImageClassification", "MobileViTConfig", _pixels(64),
                      image_size=64, hidden_sizes=[32, 32, 32],
                      neck_hidden_sizes=[8, 8, 16, 16, 16, 32, 64], num_labels=10,
                      initializer_range=0.2)),  # at 0.02 the features vanish (1e-44)
    ("levit", _hf("LevitForImageClassification", "LevitConfig", _pixels(64), image_size=64,
                  hidden_sizes=[32, 48, 64], num_attention_heads=[1, 2, 2], depths=[1, 1, 1],
                  key_dim=[8, 8, 8], num_labels=10)),
    ("convnextv2", _hf("ConvNextV2ForImageClassification", "ConvNextV2Config", _pixels(),
                       num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], num_labels=10)),
    ("poolformer", _hf("PoolFormerForImageClassification", "PoolFormerConfig", _pixels(),
                       num_encoder_blocks=2, depths=[1, 1], hidden_sizes=[16, 32],
                       patch_sizes=[7, 3], strides=[4, 2], padding=[2, 1], num_labels=10)),
    ("clip_vision", _hf("CLIPVisionModel", "CLIPVisionConfig", _pixels(), image_size=32,
                        patch_size=8, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=2, num_attention_heads=2)),
    ("mobilebert", _hf("MobileBertModel", "MobileBertConfig", _text_mask, embedding_size=16,
                       intra_bottleneck_size=16, true_hidden_size=16, num_feedforward_networks=2,
                       **_WIDTH)),
    ("squeezebert", _hf("SqueezeBertModel", "SqueezeBertConfig", _text_mask, embedding_size=32,
                        q_groups=2, k_groups=2, v_groups=2, post_attention_groups=2,
                        intermediate_groups=2, output_groups=2, **_WIDTH)),
    ("funnel", _hf("FunnelModel", "FunnelConfig", _text_mask, vocab_size=_VOCAB,
                   block_sizes=[1, 1], d_model=32, n_head=4, d_head=8, d_inner=64)),
    ("roformer", _hf("RoFormerModel", "RoFormerConfig", _text_mask, embedding_size=32,
                     **_WIDTH)),
    ("convbert", _hf("ConvBertModel", "ConvBertConfig", _text_mask, embedding_size=32,
                     **_WIDTH)),
    ("nystromformer", _hf("NystromformerModel", "NystromformerConfig", _text,  # a mask: eager fails
                          num_landmarks=4, segment_means_seq_len=_SEQ, **_WIDTH)),
    ("codegen", _hf("CodeGenForCausalLM", "CodeGenConfig", _text, vocab_size=_VOCAB,
                    n_positions=64, n_ctx=64, n_embd=32, n_layer=2, n_head=4, rotary_dim=4)),
    ("gpt_bigcode", _hf("GPTBigCodeForCausalLM", "GPTBigCodeConfig", _text, vocab_size=_VOCAB,
                        n_positions=64, n_embd=32, n_layer=2, n_head=4)),
    ("mpt", _hf("MptForCausalLM", "MptConfig", _text, vocab_size=_VOCAB, d_model=32, n_heads=4,
                n_layers=2, max_seq_len=64)),
    ("biogpt", _hf("BioGptForCausalLM", "BioGptConfig", _text, **_WIDTH)),
    ("xglm", _hf("XGLMForCausalLM", "XGLMConfig", _text, vocab_size=_VOCAB, d_model=32,
                 ffn_dim=64, num_layers=2, attention_heads=4, max_position_embeddings=64)),
    ("persimmon", _hf("PersimmonForCausalLM", "PersimmonConfig", _text, **_WIDTH)),
    ("granite", _hf("GraniteForCausalLM", "GraniteConfig", _text, **_DECODER)),
    ("cohere", _hf("CohereForCausalLM", "CohereConfig", _text, **_DECODER)),
    ("t5", _hf("T5ForConditionalGeneration", "T5Config", lambda: (_ids(), None, _ids()),
               vocab_size=_VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
               decoder_start_token_id=0)),
    ("bart", _hf("BartForConditionalGeneration", "BartConfig", lambda: (_ids(), None, _ids()),
                 vocab_size=_VOCAB, d_model=32, encoder_layers=1, decoder_layers=1,
                 encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                 decoder_ffn_dim=64, max_position_embeddings=64)),
    ("whisper_encoder", lambda: _whisper_encoder()),
    ("wav2vec2", _hf("Wav2Vec2Model", "Wav2Vec2Config", lambda: (torch.randn(1, 800),),
                     hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, conv_dim=[16, 16], conv_stride=[5, 2],
                     conv_kernel=[10, 3], num_conv_pos_embeddings=16,
                     num_conv_pos_embedding_groups=4)),
    ("ast", _hf("ASTForAudioClassification", "ASTConfig", lambda: (torch.randn(1, 32, 16),),
                hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                patch_size=8, max_length=32, num_mel_bins=16, frequency_stride=8, time_stride=8,
                num_labels=10)),
    ("swinv2", _hf("Swinv2ForImageClassification", "Swinv2Config", _pixels(), image_size=32,
                   patch_size=2, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4,
                   num_labels=10)),
    ("focalnet", _hf("FocalNetForImageClassification", "FocalNetConfig", _pixels(),
                     image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
                     focal_levels=[2, 2], focal_windows=[3, 3], num_labels=10)),
    ("yolos", _hf("YolosForObjectDetection", "YolosConfig", _pixels(), image_size=[32, 32],
                  patch_size=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=2, num_detection_tokens=4, num_labels=3)),
    ("dpt", _hf("DPTForDepthEstimation", "DPTConfig", _pixels(), image_size=32, patch_size=8,
                hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                num_attention_heads=2, backbone_out_indices=[0, 1, 2, 3],
                neck_hidden_sizes=[8, 16, 16, 32], fusion_hidden_size=16,
                head_in_index=-1)),
    ("glpn", _hf("GLPNForDepthEstimation", "GLPNConfig", _pixels(), num_encoder_blocks=2,
                 depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                 num_attention_heads=[1, 2], patch_sizes=[7, 3], strides=[4, 2],
                 mlp_ratios=[2, 2], decoder_hidden_size=16)),
    ("bit", _hf("BitForImageClassification", "BitConfig", _pixels(), embedding_size=16,
                hidden_sizes=[16, 32], depths=[1, 1], num_groups=8, num_labels=10)),
    ("hf_mobilenet_v2", _hf("MobileNetV2ForImageClassification", "MobileNetV2Config",
                            _pixels(), image_size=32, depth_multiplier=0.25, num_labels=10)),
    ("data2vec_vision", _hf("Data2VecVisionForImageClassification", "Data2VecVisionConfig",
                            _pixels(), **_VISION)),
    ("pvt_v2", _hf("PvtV2ForImageClassification", "PvtV2Config", _pixels(),
                   num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                   num_attention_heads=[1, 2], patch_sizes=[7, 3], strides=[4, 2],
                   mlp_ratios=[2, 2], num_labels=10)),
    ("mobilevitv2", _hf("MobileViTV2ForImageClassification", "MobileViTV2Config", _pixels(64),
                        image_size=64, width_multiplier=0.25, num_labels=10,
                        initializer_range=0.2)),
    ("swiftformer", _hf("SwiftFormerForImageClassification", "SwiftFormerConfig", _pixels(64),
                        image_size=64, depths=[1, 1, 1, 1], embed_dims=[8, 16, 24, 32],
                        num_labels=10)),
]


def _whisper_encoder():
    tf = _tf()
    config = tf.WhisperConfig(vocab_size=_VOCAB, num_mel_bins=16, d_model=32, encoder_layers=2,
                              decoder_layers=1, encoder_attention_heads=4,
                              decoder_attention_heads=4, encoder_ffn_dim=64,
                              decoder_ffn_dim=64, max_source_positions=16,
                              max_target_positions=16, pad_token_id=0, bos_token_id=1,
                              eos_token_id=2, decoder_start_token_id=1)
    return tf.WhisperModel(config).get_encoder(), (torch.randn(1, 16, 32),)


def _bart_encoder():
    tf = _tf()
    config = tf.BartConfig(vocab_size=_VOCAB, d_model=32, encoder_layers=2, decoder_layers=1,
                           encoder_attention_heads=4, decoder_attention_heads=4,
                           encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
                           use_cache=False)
    return tf.BartModel(config).get_encoder(), _text_mask()


# name -> (library, builder)
MODELS = collections.OrderedDict(
    [(name, ("torchvision", b)) for name, b in _TORCHVISION] +
    [(name, ("transformers", b)) for name, b in _TRANSFORMERS])


# -- the table ---------------------------------------------------------------------------


def _reason(error):
    """The op or pattern an error names, short (the table's last column)."""
    text = str(error)
    for pattern in (r"function '([^']+)' is not supported", r"tensor method '([^']+)'",
                    r"module (\w+) is not supported"):
        m = re.search(pattern, text)
        if m:
            return f"{m.group(1)} not supported"
    return zoo._short(error)[:160]


def check(name, how):
    """zoo.check for an unseen model, `how` = "module" or "exported"; the
    Row, with row.error set on any failure (a tool's too)."""
    try:
        return zoo.check(name, exported=how == "exported", devices=4, system="cpu4")[0]
    except DopplerError as e:
        row = zoo.Row(name, MODELS[name][0])
        row.error = _short(e)
        return row
    except Exception as e:  # noqa: BLE001 - the eager model itself, or a frontend bug
        row = zoo.Row(name, MODELS[name][0])
        row.error = f"{type(e).__name__}: {_short(e)}"
        return row


def _short(error):
    return zoo._short(error)[:300]


def _result(row):
    if row.skipped:
        return f"skipped: {row.skipped}"
    if row.error:
        return "error: " + _reason(row.error).replace("|", "\\|")
    return "ok" if row.rel_error <= 1e-4 else "WRONG (above 1e-4)"


def table(pairs):
    """Markdown: one line per model, its module and ExportedProgram results."""
    lines = ["| model | library | doppler ops | rel. error (module / exported) | "
             "import s | run s | result (module) | result (exported) |",
             "|---|---|---|---|---|---|---|---|"]
    for module_row, exported_row in pairs:
        r, other = module_row, exported_row
        lines.append(f"| {r.name} | {r.library} | {zoo._ops_text(r.ops)} | "
                     f"{zoo.figure(r.rel_error, '.1e')} / "
                     f"{zoo.figure(other.rel_error if other else None, '.1e')} | "
                     f"{zoo.figure(r.import_s)} | {zoo.figure(r.run_s)} | {_result(r)} | "
                     f"{_result(other) if other else '-'} |")
    return "\n".join(lines)


_SECTION = "## Models the zoo does not list"


def write_section(path, text, total, count):
    """Replaces (or appends) this script's section of `path`, up to the next
    '## ' heading; the rest of the file is kept."""
    libs = []
    for lib in ("torchvision", "transformers"):
        try:
            libs.append(f"{lib} {__import__(lib).__version__.split('+')[0]}")
        except ImportError:
            pass
    body = (f"{_SECTION}\n\n"
            "Written by `scripts/zoo_unseen.py --table docs/zoo.md` (python/doppler/"
            "zoo_unseen.py): models of the same libraries that the zoo above does not list "
            "and that nothing in the frontend was written for, each built with random "
            "weights at a small configuration (seed 0), run through `doppler.run` on 4 cpu4 "
            "devices as an nn.Module and as an ExportedProgram and compared with PyTorch "
            f"eager (torch {torch.__version__.split('+')[0]}, {', '.join(libs)}). Columns as "
            "in the tables above; *doppler ops* and the times are the module's.\n\n"
            f"{text}\n\n{sys.platform}, {os.cpu_count()} CPUs (shared); these {count} "
            f"models, both ways: {total:.0f} s.\n")
    zoo.replace_section(path, _SECTION, body)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="scripts/zoo_unseen.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", help=f"default: all ({', '.join(MODELS)})")
    parser.add_argument("--table", help="write the table as a section of this Markdown file")
    parser.add_argument("--module-only", action="store_true",
                        help="hand each model over as an nn.Module only")
    args = parser.parse_args(argv)
    names = args.models or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    from .sources import has_export
    exported = has_export() and not args.module_only
    pairs = []
    start = time.perf_counter()
    for name in names:
        row = check(name, "module")
        other = check(name, "exported") if exported and not row.skipped else None
        pairs.append((row, other))
        print(table([(row, other)]).splitlines()[-1], flush=True)
        if row.error or (other and other.error):
            print(f"  {name}: {row.error or other.error}", flush=True)
    total = time.perf_counter() - start
    text = table(pairs)
    print(f"\n{text}\n\n{len(names)} models in {total:.0f} s")
    if args.table:
        write_section(args.table, text, total, len(names))
    bad = [r for pair in pairs for r in pair if r is not None and not r.skipped and
           (r.error or r.rel_error > 1e-4)]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
