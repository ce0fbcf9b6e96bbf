"""A byte-level tokenizer and a tiny randomly initialised causal LM, built locally (no hub download).

Runs in the side venv (tests/sidevenv.py). Every byte is one token, so any text round-trips exactly through
encode and decode: verl's reward managers decode the responses we encode, and the text they hand the reward
function is the text we wrote.
"""

from __future__ import annotations

from pathlib import Path

SPECIALS = ["<pad>", "<eos>"]


def build_tokenizer(folder: Path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {token: i for i, token in enumerate(SPECIALS + sorted(alphabet))}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>")
    tokenizer.chat_template = (
        "{% for m in messages %}{{ m['role'] }}: {{ m['content'] if m['content'] is string else '' }}\n"
        "{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}"
    )
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(str(folder))
    return tokenizer


def build_model(folder: Path):
    """A 2-layer Llama with a 64-wide hidden state, random weights, saved beside its tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = build_tokenizer(folder)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(str(folder))
    return model, tokenizer
